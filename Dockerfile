# One image for every Quire process; the command picks the app, e.g.
#   docker run quire node --import tsx apps/stage-worker/src/main.ts
# No build step: TypeScript runs through tsx. See docker-compose.yml for every service.

# Only the package manifests, so the npm install layer below stays cached until one of them changes.
FROM node:20-bookworm-slim AS manifests
WORKDIR /src
COPY . .
RUN mkdir /out && cp package.json package-lock.json /out/ \
 && find apps packages -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /out/ \;

FROM node:20-bookworm-slim
# poppler-utils: pdftoppm for PDF rasterisation (STACK-NOTES §7). ca-certificates: outbound HTTPS webhooks.
RUN apt-get update \
 && apt-get install -y --no-install-recommends poppler-utils ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production \
    QUIRE_BLOB_DIR=/data/blobs \
    QUIRE_UPLOAD_DIR=/data/uploads \
    PRISMA_HIDE_UPDATE_MESSAGE=1 \
    CHECKPOINT_DISABLE=1

COPY --from=manifests /out/ ./
# `npm install`, not `npm ci`: the lockfile lacks other-platform optional packages (STACK-NOTES §2).
# --include=dev: NODE_ENV=production would skip tsx, prisma and the schema engine, which the image runs.
RUN npm install --include=dev --no-audit --no-fund && npm cache clean --force

COPY . .
# The Prisma client is generated, not committed; the wrapper supplies the offline schema engine.
RUN node scripts/prisma/prisma.mjs generate \
 && mkdir -p /data/blobs /data/uploads \
 && chown -R node:node /data

USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "apps/api/src/main.ts"]

# One image for every Quire process: compiled JavaScript (tsc, `npm run build`) and production dependencies only.
# The command picks the app, e.g.  docker run quire node apps/stage-worker/dist/main.js ; see docker-compose.yml.
# BASE: any Node 22 LTS image with npm on Debian bookworm (the public one by default; `npm run test:containers` builds
# an equivalent from Debian packages when no registry is reachable).
ARG BASE=docker.io/library/node:22-bookworm-slim

# Every dependency, from the manifests only, so this layer stays cached until one of them changes. Each workspace's
# package.json is listed (tests/build/dev-helpers.test.ts checks the list is complete).
FROM ${BASE} AS deps
# Only for machines whose outbound TLS goes through their own CA: a build-time path to a mounted bundle, never baked in.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY apps/api/package.json apps/api/
COPY apps/review-desk/package.json apps/review-desk/
COPY apps/stage-worker/package.json apps/stage-worker/
COPY apps/webhook-dispatcher/package.json apps/webhook-dispatcher/
COPY packages/client/package.json packages/client/
COPY packages/config/package.json packages/config/
COPY packages/core/package.json packages/core/
COPY packages/db/package.json packages/db/
COPY packages/domain/package.json packages/domain/
COPY packages/extraction/package.json packages/extraction/
COPY packages/forms/package.json packages/forms/
COPY packages/ledger/package.json packages/ledger/
COPY packages/queues/package.json packages/queues/
COPY packages/runtime/package.json packages/runtime/
COPY packages/secrets/package.json packages/secrets/
COPY packages/signing/package.json packages/signing/
COPY packages/storage/package.json packages/storage/
COPY packages/testing/package.json packages/testing/
COPY packages/webhooks/package.json packages/webhooks/
# `npm install`, not `npm ci`: registries without other platforms' optional packages make `npm ci` refuse the lockfile.
RUN npm install --no-audit --no-fund

# Build: the Prisma client generated, `tsc -b` to each app's and package's dist/.
FROM deps AS build
COPY . .
# generate never runs the schema engine; any existing file keeps the CLI from downloading one.
RUN PRISMA_SCHEMA_ENGINE_BINARY=/bin/true PRISMA_HIDE_UPDATE_MESSAGE=1 CHECKPOINT_DISABLE=1 npx prisma generate \
 && npm run build \
 && find apps packages -path '*/dist/*' \( -name '*.tsbuildinfo' -o -name '*.d.ts' -o -name '*.d.ts.map' \) -delete \
 && rm -rf packages/testing \
 && find apps packages -mindepth 2 -maxdepth 2 ! -name dist ! -name package.json ! -name assets -exec rm -rf {} +

# Production dependencies only (no tsx, Prisma CLI, TypeScript, vitest, embedded PostgreSQL): the same tree, pruned.
FROM deps AS prod-deps
RUN npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/@quire/testing

FROM ${BASE}
# poppler-utils: pdftoppm for PDF rasterisation. ca-certificates: outbound HTTPS webhooks and S3.
RUN apt-get update \
 && apt-get install -y --no-install-recommends poppler-utils ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    QUIRE_HOST=0.0.0.0 \
    QUIRE_BLOB_DIR=/data/blobs \
    QUIRE_UPLOAD_DIR=/data/uploads
RUN mkdir -p /data/blobs /data/uploads && chown -R node:node /data
COPY --from=prod-deps /src/package.json ./
COPY --from=prod-deps /src/node_modules ./node_modules
COPY prisma/migrations ./prisma/migrations
# Each app's and package's package.json, dist/ and assets/ (/docs' own files); sources, tests and the test fixtures
# package stay behind.
COPY --from=build /src/apps ./apps
COPY --from=build /src/packages ./packages
USER node
EXPOSE 3000
# The API's own Node flags: apps/api/package.json `quire.nodeFlags` (README, "Operating").
CMD ["node", "--max-semi-space-size=24", "apps/api/dist/main.js"]

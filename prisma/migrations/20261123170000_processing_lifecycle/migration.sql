-- Processing lifecycle: documents carry why they failed; jobs may wait for review and belong to an error group.
ALTER TABLE "documents" ADD COLUMN "error_code" TEXT, ADD COLUMN "error_message" TEXT;

ALTER TABLE "jobs" ADD COLUMN "wait_for_review" BOOLEAN NOT NULL DEFAULT false, ADD COLUMN "error_group_id" TEXT;
CREATE INDEX "jobs_error_group_id_idx" ON "jobs"("error_group_id");

CREATE TYPE "ErrorGroupStatus" AS ENUM ('open', 'escalated', 'resolved');

CREATE TABLE "error_groups" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "error_code" TEXT NOT NULL,
    "open_key" TEXT,
    "status" "ErrorGroupStatus" NOT NULL DEFAULT 'open',
    "last_error" TEXT NOT NULL,
    "jobs_total" INTEGER NOT NULL DEFAULT 0,
    "retries" INTEGER NOT NULL DEFAULT 0,
    "next_retry_at" TIMESTAMP(3),
    "reruns" INTEGER NOT NULL DEFAULT 0,
    "opened_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "escalated_at" TIMESTAMP(3),
    "resolved_at" TIMESTAMP(3),
    CONSTRAINT "error_groups_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "error_groups_open_key_key" ON "error_groups"("open_key");
CREATE INDEX "error_groups_status_next_retry_at_idx" ON "error_groups"("status", "next_retry_at");
CREATE INDEX "error_groups_workspace_id_opened_at_idx" ON "error_groups"("workspace_id", "opened_at");

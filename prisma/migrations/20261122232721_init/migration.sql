-- CreateEnum
CREATE TYPE "ApiForm" AS ENUM ('A', 'B');

-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('queued', 'preprocessing', 'processing', 'awaiting_review', 'completed', 'completed_with_errors', 'failed', 'timed_out', 'cancelled', 'blocked', 'partial');

-- CreateEnum
CREATE TYPE "StageRunStatus" AS ENUM ('running', 'completed', 'failed', 'skipped');

-- CreateEnum
CREATE TYPE "HoldStatus" AS ENUM ('pending', 'posted', 'voided', 'expired');

-- CreateEnum
CREATE TYPE "LedgerAccount" AS ENUM ('issuance', 'available', 'reserved', 'spent');

-- CreateEnum
CREATE TYPE "LedgerEntryKind" AS ENUM ('grant', 'reserve', 'settle', 'release', 'void', 'expire');

-- CreateEnum
CREATE TYPE "WebhookStatus" AS ENUM ('active', 'failing');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('pending', 'succeeded', 'failed', 'abandoned');

-- CreateTable
CREATE TABLE "workspaces" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "api_form" "ApiForm" NOT NULL,
    "default_pipeline_id" TEXT,
    "spending_cap" INTEGER,
    "credits_available" INTEGER NOT NULL DEFAULT 0,
    "credits_reserved" INTEGER NOT NULL DEFAULT 0,
    "credits_spent" INTEGER NOT NULL DEFAULT 0,
    "spend_period" DATE,
    "spend_period_used" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "key_prefix" TEXT NOT NULL,
    "scopes" TEXT[],
    "pipeline_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pipelines" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipelines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pipeline_versions" (
    "id" TEXT NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "published_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipeline_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "pipeline_id" TEXT NOT NULL,
    "pipeline_version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "status" "JobStatus" NOT NULL,
    "stage_now" TEXT,
    "failed_stage" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "priority" TEXT NOT NULL DEFAULT 'standard',
    "execution_mode" TEXT NOT NULL DEFAULT 'async',
    "environment" TEXT NOT NULL DEFAULT 'production',
    "source_tag" TEXT,
    "client_reference_id" TEXT,
    "schema_id" TEXT,
    "metadata" JSONB,
    "page_count" INTEGER NOT NULL,
    "credits_reserved" INTEGER NOT NULL,
    "credits_used" INTEGER,
    "degradation_reason" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),
    "expired_at" TIMESTAMP(3),

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_files" (
    "id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "file_type" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "page_count" INTEGER NOT NULL,
    "blob_key" TEXT NOT NULL,

    CONSTRAINT "job_files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "documents" (
    "id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "parent_id" TEXT,
    "file_position" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "type" TEXT,
    "schema_id" TEXT,
    "pages" INTEGER[],
    "metadata" JSONB,
    "content" JSONB,
    "data" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "documents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "document_events" (
    "id" TEXT NOT NULL,
    "document_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "document_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stage_runs" (
    "id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "status" "StageRunStatus" NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "credits" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMP(3),
    "ms" INTEGER,

    CONSTRAINT "stage_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_holds" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "status" "HoldStatus" NOT NULL DEFAULT 'pending',
    "posted" INTEGER,
    "period" DATE NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMP(3),

    CONSTRAINT "credit_holds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "job_id" TEXT,
    "kind" "LedgerEntryKind" NOT NULL,
    "debit_account" "LedgerAccount" NOT NULL,
    "credit_account" "LedgerAccount" NOT NULL,
    "amount" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "auth_type" TEXT NOT NULL DEFAULT 'none',
    "auth" JSONB,
    "events" TEXT[],
    "headers" JSONB,
    "description" TEXT,
    "secret" TEXT NOT NULL,
    "status" "WebhookStatus" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "job_id" TEXT,
    "document_id" TEXT,
    "type" TEXT NOT NULL,
    "stage" TEXT,
    "transition" TEXT,
    "data" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fanned_out_at" TIMESTAMP(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMP(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notifications" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "queue" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "job_key" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "priority" INTEGER,
    "delay_ms" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMP(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_workspace_id_idx" ON "api_keys"("workspace_id");

-- CreateIndex
CREATE INDEX "pipelines_workspace_id_created_at_idx" ON "pipelines"("workspace_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "pipeline_versions_pipeline_id_version_key" ON "pipeline_versions"("pipeline_id", "version");

-- CreateIndex
CREATE INDEX "jobs_workspace_id_created_at_id_idx" ON "jobs"("workspace_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_status_idx" ON "jobs"("status");

-- CreateIndex
CREATE UNIQUE INDEX "job_files_job_id_position_key" ON "job_files"("job_id", "position");

-- CreateIndex
CREATE INDEX "documents_job_id_idx" ON "documents"("job_id");

-- CreateIndex
CREATE INDEX "document_events_document_id_created_at_idx" ON "document_events"("document_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "stage_runs_job_id_stage_key" ON "stage_runs"("job_id", "stage");

-- CreateIndex
CREATE UNIQUE INDEX "credit_holds_job_id_key" ON "credit_holds"("job_id");

-- CreateIndex
CREATE INDEX "credit_holds_workspace_id_status_idx" ON "credit_holds"("workspace_id", "status");

-- CreateIndex
CREATE INDEX "credit_holds_status_created_at_idx" ON "credit_holds"("status", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_workspace_id_created_at_id_idx" ON "ledger_entries"("workspace_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_job_id_kind_key" ON "ledger_entries"("job_id", "kind");

-- CreateIndex
CREATE UNIQUE INDEX "webhooks_workspace_id_name_key" ON "webhooks"("workspace_id", "name");

-- CreateIndex
CREATE INDEX "events_job_id_idx" ON "events"("job_id");

-- CreateIndex
CREATE INDEX "events_fanned_out_at_created_at_idx" ON "events"("fanned_out_at", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_webhook_id_event_type_key" ON "webhook_deliveries"("event_id", "webhook_id", "event_type");

-- CreateIndex
CREATE UNIQUE INDEX "delivery_attempts_delivery_id_attempt_key" ON "delivery_attempts"("delivery_id", "attempt");

-- CreateIndex
CREATE INDEX "notifications_workspace_id_created_at_idx" ON "notifications"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_dispatched_at_id_idx" ON "outbox"("dispatched_at", "id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pipeline_versions" ADD CONSTRAINT "pipeline_versions_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_files" ADD CONSTRAINT "job_files_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "documents" ADD CONSTRAINT "documents_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "document_events" ADD CONSTRAINT "document_events_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stage_runs" ADD CONSTRAINT "stage_runs_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_holds" ADD CONSTRAINT "credit_holds_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

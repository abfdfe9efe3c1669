-- A requeue of work BullMQ may have finished without PostgreSQL knowing (a job failed in BullMQ during an outage):
-- the relay removes a finished job under the same id before adding, instead of the add being a silent no-op.
ALTER TABLE "outbox" ADD COLUMN "replace_finished" BOOLEAN NOT NULL DEFAULT false;

-- Two indexes that held an entry for every row but are only ever searched for a few: now partial. Hand-written:
-- `npm run db:reset-migration` regenerates only the init migration, so keep this directory (schema.prisma still
-- declares the full indexes, which the init migration creates; this one replaces them).
--
-- * events: the only search by `fanned_out_at` is for events still owed to webhooks (`fanned_out_at IS NULL`,
--   oldest first: requeueStalledWork). An event of a workspace without webhooks is written already fanned out, and
--   a job writes about fifteen: none of them needs an index entry any more, and the index holds only what is owed.
-- * jobs: `error_group_id` is NULL except while a job is blocked in an error group, and it is searched only by a
--   group id. Every job insert, and every job update that is not HOT (each status change: `status` is indexed),
--   used to add a NULL entry here.
--
-- A search must imply the index's condition for PostgreSQL to use it: `error_group_id = $1` does (the operator is
-- strict), `error_group_id = ANY($1)` does not in a generic plan, so such a query says `error_group_id IS NOT NULL`.
DROP INDEX "events_fanned_out_at_created_at_idx";
CREATE INDEX "events_owed_created_at_idx" ON "events" ("created_at") WHERE "fanned_out_at" IS NULL;

DROP INDEX "jobs_error_group_id_idx";
CREATE INDEX "jobs_error_group_id_idx" ON "jobs" ("error_group_id") WHERE "error_group_id" IS NOT NULL;

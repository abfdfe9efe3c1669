-- The stage's process went on to the next stage itself (no queue message): a re-delivery of this stage's queue job
-- after a crash resumes the chain from the first stage not done.
ALTER TABLE "stage_runs" ADD COLUMN "continued_inline" BOOLEAN NOT NULL DEFAULT false;

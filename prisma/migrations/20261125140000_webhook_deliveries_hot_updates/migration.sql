-- Every delivery row is updated after its insert (its outcome: status, attempts, completed_at, next_attempt_at, none
-- of them indexed). With full pages the new row version lands on another page and all three indexes get a new entry
-- (a non-HOT update; about 2% of them were HOT in a test of the dispatcher's pattern); with half of each page left
-- free the version stays on its page and no index is touched (all HOT in the same test). Applies to pages written
-- from now on; no rewrite.
ALTER TABLE "webhook_deliveries" SET (fillfactor = 50);

-- The invariants of `20261122232722_ledger_checks` on credit_holds and ledger_entries, one CHECK per table that calls
-- an IMMUTABLE PL/pgSQL function instead of six expressions. Hand-written: `npm run db:reset-migration` regenerates
-- only the init migration, so keep this directory.
--
-- Why: PostgreSQL reads a table's CHECK expressions back from their stored form and plans them again for every
-- statement that writes the table (not once per session). These were about 11 KB stored (each enum literal and
-- comparison is a node), and every submission and every reservation inserts a hold and an entry: re-reading them
-- was about 25 µs of the 150 µs PostgreSQL spends on a reservation. A call of a PL/pgSQL function is a few hundred
-- bytes stored, and the function's own expressions are planned once per session.
--
-- Same rules, one stricter: the old hold check let a `posted` hold with `posted` NULL through (the comparison is NULL,
-- which a CHECK accepts); these functions answer true or false, never NULL. Nothing in Quire writes such a hold.
-- Replacing a function does not re-check existing rows: change these only by a migration that drops and re-adds the
-- constraint, so PostgreSQL validates every row against the new rule.
CREATE FUNCTION ledger_hold_is_valid(
  p_status "HoldStatus",
  p_amount integer,
  p_posted integer,
  p_period date,
  p_resolved_at timestamp
) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  -- A hold is pending with nothing posted, posted for at most what it held, or released whole; its period is the
  -- first day of a month.
  RETURN COALESCE(
    p_amount >= 0
    AND EXTRACT(DAY FROM p_period) = 1
    AND CASE p_status
      WHEN 'pending' THEN p_posted IS NULL AND p_resolved_at IS NULL
      WHEN 'posted' THEN p_posted BETWEEN 0 AND p_amount AND p_resolved_at IS NOT NULL
      ELSE p_posted = 0 AND p_resolved_at IS NOT NULL -- voided, expired
    END,
    false);
END
$$;

CREATE FUNCTION ledger_entry_is_valid(
  p_kind "LedgerEntryKind",
  p_debit "LedgerAccount",
  p_credit "LedgerAccount",
  p_amount integer,
  p_job_id text
) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  -- Every entry moves a positive amount along the one account pair its kind allows; only grants have no job.
  RETURN COALESCE(
    p_amount > 0
    AND (p_kind = 'grant') = (p_job_id IS NULL)
    AND CASE p_kind
      WHEN 'grant' THEN p_debit = 'issuance' AND p_credit = 'available'
      WHEN 'reserve' THEN p_debit = 'available' AND p_credit = 'reserved'
      WHEN 'settle' THEN p_debit = 'reserved' AND p_credit = 'spent'
      ELSE p_debit = 'reserved' AND p_credit = 'available' -- release, void, expire
    END,
    false);
END
$$;

ALTER TABLE "credit_holds"
  DROP CONSTRAINT "credit_holds_amount_nonneg",
  DROP CONSTRAINT "credit_holds_state",
  DROP CONSTRAINT "credit_holds_period_is_month",
  ADD CONSTRAINT "credit_holds_valid" CHECK (ledger_hold_is_valid("status", "amount", "posted", "period", "resolved_at"));

ALTER TABLE "ledger_entries"
  DROP CONSTRAINT "ledger_entries_amount_positive",
  DROP CONSTRAINT "ledger_entries_accounts",
  DROP CONSTRAINT "ledger_entries_job",
  ADD CONSTRAINT "ledger_entries_valid" CHECK (ledger_entry_is_valid("kind", "debit_account", "credit_account", "amount", "job_id"));

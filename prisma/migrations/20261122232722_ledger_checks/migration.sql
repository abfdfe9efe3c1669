-- Ledger invariants that Prisma's schema language cannot express. Hand-written: `npm run db:reset-migration`
-- regenerates only the init migration, so keep this directory (the ledger's integration test checks these exist).

-- Balances never go negative: a reservation that would overdraw fails in PostgreSQL, not in the app.
ALTER TABLE "workspaces"
  ADD CONSTRAINT "workspaces_credits_available_nonneg" CHECK ("credits_available" >= 0),
  ADD CONSTRAINT "workspaces_credits_reserved_nonneg" CHECK ("credits_reserved" >= 0),
  ADD CONSTRAINT "workspaces_credits_spent_nonneg" CHECK ("credits_spent" >= 0),
  ADD CONSTRAINT "workspaces_spend_period_used_nonneg" CHECK ("spend_period_used" >= 0),
  ADD CONSTRAINT "workspaces_spending_cap_nonneg" CHECK ("spending_cap" IS NULL OR "spending_cap" >= 0);

-- A hold is pending with nothing posted, posted for at most what it held, or released whole.
ALTER TABLE "credit_holds"
  ADD CONSTRAINT "credit_holds_amount_nonneg" CHECK ("amount" >= 0),
  ADD CONSTRAINT "credit_holds_state" CHECK (
    ("status" = 'pending' AND "posted" IS NULL AND "resolved_at" IS NULL)
    OR ("status" = 'posted' AND "posted" BETWEEN 0 AND "amount" AND "resolved_at" IS NOT NULL)
    OR ("status" IN ('voided', 'expired') AND "posted" = 0 AND "resolved_at" IS NOT NULL)
  ),
  ADD CONSTRAINT "credit_holds_period_is_month" CHECK (EXTRACT(DAY FROM "period") = 1);

-- Every entry moves a positive amount along the one account pair its kind allows; only grants have no job.
ALTER TABLE "ledger_entries"
  ADD CONSTRAINT "ledger_entries_amount_positive" CHECK ("amount" > 0),
  ADD CONSTRAINT "ledger_entries_accounts" CHECK (
    ("kind" = 'grant' AND "debit_account" = 'issuance' AND "credit_account" = 'available')
    OR ("kind" = 'reserve' AND "debit_account" = 'available' AND "credit_account" = 'reserved')
    OR ("kind" = 'settle' AND "debit_account" = 'reserved' AND "credit_account" = 'spent')
    OR ("kind" IN ('release', 'void', 'expire') AND "debit_account" = 'reserved' AND "credit_account" = 'available')
  ),
  ADD CONSTRAINT "ledger_entries_job" CHECK (("kind" = 'grant') = ("job_id" IS NULL));

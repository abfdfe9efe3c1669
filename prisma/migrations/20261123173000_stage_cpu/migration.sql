-- CPU time each stage used (Form A machine_seconds).
ALTER TABLE "stage_runs" ADD COLUMN "cpu_ms" INTEGER;

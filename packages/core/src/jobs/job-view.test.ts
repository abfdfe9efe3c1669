import { describe, expect, it } from 'vitest'
import { toJobView } from './job-view.ts'

type Row = Parameters<typeof toJobView>[0]
type RunRow = Row['stageRuns'][number]

const at = new Date('2026-11-27T05:00:00.000Z')
const run = (stage: string, startedAt = at): RunRow => ({
  id: `run_${stage}`,
  jobId: 'job_1',
  stage,
  status: 'completed',
  attempts: 1,
  credits: 0,
  error: null,
  startedAt,
  completedAt: startedAt,
  ms: 1,
  cpuMs: null,
  continuedInline: false,
})

const row = (stageRuns: RunRow[]) =>
  ({
    id: 'job_1',
    workspaceId: 'ws_1',
    pipelineId: 'parse',
    pipelineVersion: 1,
    definition: {},
    status: 'completed',
    stageNow: null,
    failedStage: null,
    errorCode: null,
    errorMessage: null,
    priority: 'standard',
    executionMode: 'async',
    environment: 'production',
    sourceTag: null,
    clientReferenceId: null,
    schemaId: null,
    metadata: null,
    pageCount: 1,
    creditsReserved: 1,
    creditsUsed: 1,
    degradationReason: null,
    createdAt: at,
    startedAt: at,
    completedAt: at,
    expiredAt: null,
    waitForReview: false,
    errorGroupId: null,
    fileName: null,
    fileType: null,
    mimeType: null,
    sizeBytes: null,
    blobKey: null,
    holdPeriod: null,
    files: [],
    documents: [],
    stageRuns,
  }) as Row

describe('toJobView', () => {
  it("lists a lone job's file kept in the job row as its only file, with the job's pages", () => {
    const inRow = {
      ...row([]),
      pageCount: 3,
      fileName: 'scan.pdf',
      fileType: 'pdf',
      mimeType: 'application/pdf',
      sizeBytes: 1234,
      blobKey: 'ws_1/00/job_1/0',
    }
    expect(toJobView(inRow).files).toEqual([
      { fileName: 'scan.pdf', fileType: 'pdf', mimeType: 'application/pdf', sizeBytes: 1234, pageCount: 3 },
    ])
    expect(toJobView(row([])).files).toEqual([])
  })

  it('lists stages in pipeline order (DESIGN: "Stages, in order: source, initialization, parse, ..."), whatever their start times', () => {
    // Chained stages start within one millisecond, and the rows come back in any order among equal start times.
    const later = new Date(at.getTime() + 5)
    const stored = [
      run('destination'),
      run('split_classify'),
      run('extract', later),
      run('parse'),
      run('validate'),
      run('initialization'),
      run('source'),
      run('post_processing'),
    ]
    expect(toJobView(row(stored)).stages.map((s) => s.stage)).toEqual([
      'source',
      'initialization',
      'parse',
      'split_classify',
      'extract',
      'validate',
      'post_processing',
      'destination',
    ])
  })
})

import { describe, expect, it } from 'vitest'
import { nextStage, STAGES, stagePosition, WORKER_STAGES } from './stages.ts'

describe('stages', () => {
  it('positions every stage in pipeline order (DESIGN: "Stages, in order: source, initialization, ...")', () => {
    expect(STAGES.map(stagePosition)).toEqual(STAGES.map((_, i) => i))
    expect(stagePosition('source')).toBe(0)
    expect(stagePosition('destination')).toBe(STAGES.length - 1)
  })

  it('puts a name that is not a stage after every stage', () => {
    expect(stagePosition('retention')).toBe(STAGES.length)
    expect(stagePosition('')).toBeGreaterThan(stagePosition('destination'))
  })

  it('chains worker stages to destination and no further', () => {
    expect(nextStage('initialization')).toBe('parse')
    expect(nextStage('destination')).toBeNull()
    expect(WORKER_STAGES).not.toContain('source')
  })
})

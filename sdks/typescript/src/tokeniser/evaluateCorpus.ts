import { ENTITY_TYPES, type EntityType, type Span } from "./types.ts"

/** One labelled item of a PII corpus (a sentence, a table, a log, an e-mail...). */
export interface LabelledSentence {
  readonly id: number | string
  readonly text: string
  readonly spans: ReadonlyArray<{ readonly type: string; readonly start: number; readonly end: number }>
}

export interface TypeScore {
  readonly truePositives: number
  readonly falsePositives: number
  readonly falseNegatives: number
  readonly precision: number
  readonly recall: number
  readonly f1: number
}

export interface CorpusScore {
  readonly sentences: number
  readonly perType: Record<string, TypeScore>
  /** All structured types pooled (exact span match). */
  readonly structured: TypeScore
  /** Names with partial credit: a predicted PERSON overlapping a labelled PERSON counts as a hit. */
  readonly personOverlap: TypeScore
  readonly errors: ReadonlyArray<{ id: number | string; kind: "false_positive" | "false_negative"; type: string; text: string }>
}

const ratio = (a: number, b: number): number => (b === 0 ? 1 : a / b)

const score = (tp: number, fp: number, fn: number): TypeScore => {
  const precision = ratio(tp, tp + fp)
  const recall = ratio(tp, tp + fn)
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return { truePositives: tp, falsePositives: fp, falseNegatives: fn, precision, recall, f1 }
}

/**
 * Scores predictions against labels: a prediction is a true positive only when type, start and end all
 * equal a label's (exact match), for every type. Names are also scored by overlap, since name
 * boundaries are fuzzier than structured identifiers'.
 */
export const scoreCorpus = (
  corpus: ReadonlyArray<LabelledSentence>,
  predictions: ReadonlyArray<ReadonlyArray<Span>>
): CorpusScore => {
  const counts = new Map<string, { tp: number; fp: number; fn: number }>()
  for (const t of ENTITY_TYPES) counts.set(t, { tp: 0, fp: 0, fn: 0 })
  const overlap = { tp: 0, fp: 0, fn: 0 }
  const errors: Array<CorpusScore["errors"][number]> = []
  corpus.forEach((sentence, i) => {
    const predicted = predictions[i] ?? []
    const key = (s: { type: string; start: number; end: number }) => `${s.type}:${s.start}:${s.end}`
    const gold = new Set(sentence.spans.map(key))
    const got = new Set(predicted.map(key))
    // A corpus may label types this engine does not produce (yet): they count as misses, not crashes.
    const countsOf = (type: string) => {
      if (!counts.has(type)) counts.set(type, { tp: 0, fp: 0, fn: 0 })
      return counts.get(type)!
    }
    for (const p of predicted) {
      const c = countsOf(p.type)
      if (gold.has(key(p))) c.tp++
      else {
        c.fp++
        errors.push({ id: sentence.id, kind: "false_positive", type: p.type, text: sentence.text.slice(p.start, p.end) })
      }
    }
    for (const g of sentence.spans) {
      if (!got.has(key(g))) {
        countsOf(g.type).fn++
        errors.push({ id: sentence.id, kind: "false_negative", type: g.type, text: sentence.text.slice(g.start, g.end) })
      }
    }
    const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end
    const goldPeople = sentence.spans.filter((s) => s.type === "PERSON")
    const predictedPeople = predicted.filter((s) => s.type === "PERSON")
    overlap.tp += goldPeople.filter((g) => predictedPeople.some((p) => overlaps(p, g))).length
    overlap.fn += goldPeople.filter((g) => !predictedPeople.some((p) => overlaps(p, g))).length
    overlap.fp += predictedPeople.filter((p) => !goldPeople.some((g) => overlaps(p, g))).length
  })
  const perType: Record<string, TypeScore> = {}
  let tp = 0
  let fp = 0
  let fn = 0
  for (const [type, c] of counts) {
    perType[type] = score(c.tp, c.fp, c.fn)
    if ((type as EntityType) !== "PERSON") {
      tp += c.tp
      fp += c.fp
      fn += c.fn
    }
  }
  return {
    sentences: corpus.length,
    perType,
    structured: score(tp, fp, fn),
    personOverlap: score(overlap.tp, overlap.fp, overlap.fn),
    errors
  }
}

import { Layer } from "effect"
import { describe } from "vitest"
import { AdmissionCountersMemory } from "../../../layers/memory/AdmissionCounters.ts"
import { QuotasMemory } from "../../../layers/memory/Quotas.ts"
import { SlotsMemory } from "../../../layers/memory/Slots.ts"
import { admissionCountersContract } from "../../support/admissionCountersContract.ts"

describe("AdmissionCountersMemory", () => {
  admissionCountersContract(() =>
    AdmissionCountersMemory.pipe(Layer.provideMerge(Layer.mergeAll(QuotasMemory, SlotsMemory)))
  )
})

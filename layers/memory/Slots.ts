import { Clock, Effect, Layer } from "effect"
import { Slots } from "../../services/Slots.ts"

/** In-process slots with expiry (one gateway process only). */
export const SlotsMemory = Layer.effect(
  Slots,
  Effect.sync(() => {
    const slots = new Map<string, { owner: string; expiresAt: number }>()
    const current = (key: string, now: number) => {
      const slot = slots.get(key)
      if (slot !== undefined && slot.expiresAt <= now) {
        slots.delete(key)
        return undefined
      }
      return slot
    }
    return Slots.of({
      acquire: (key, owner, ttlMs) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          if (current(key, now) !== undefined) return false
          slots.set(key, { owner, expiresAt: now + ttlMs })
          return true
        }),
      renew: (key, owner, ttlMs) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const slot = current(key, now)
          if (slot?.owner !== owner) return false
          slot.expiresAt = now + ttlMs
          return true
        }),
      release: (key, owner) =>
        Effect.sync(() => {
          if (slots.get(key)?.owner === owner) slots.delete(key)
        }),
      holder: (key) => Effect.map(Clock.currentTimeMillis, (now) => current(key, now)?.owner)
    })
  })
)

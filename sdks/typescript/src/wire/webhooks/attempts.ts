/**
 * Attempts per webhook delivery: `X-Service-Webhook-Attempt` counts 1..7, and the 7th failed attempt makes the
 * delivery dead. Part of the wire contract (receivers see the header), so it lives with the signature scheme; the
 * gateway's retry schedule has one delay per attempt.
 */
export const MAX_ATTEMPTS = 7

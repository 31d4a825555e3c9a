/**
 * How early the gateway's upstream timeout may fire. undici arms its headers and body timeouts with its "fast"
 * timers (lib/util/timers.js, setFastTimeout), which tick every 499 ms and date a timer from the last tick, so a
 * timeout can end up to one tick before its nominal delay. Tests that check "the gateway waited for the timeout"
 * allow this much, plus a little for the clock reads.
 */
export const UPSTREAM_TIMER_SLACK_MS = 550

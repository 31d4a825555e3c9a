/** The settings of `node bench/roundTrips.ts`: it counts PostgreSQL and Redis round trips, so it needs both. */
import { benchStorageSettings } from "../lib/benchSettings.ts"

export const ROUND_TRIPS_SETTINGS = benchStorageSettings(true)

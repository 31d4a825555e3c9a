/**
 * `npm run starter`: builds the app (starter-kit/build.ts), then serves it (starter-kit/server.ts), in ONE process.
 * It was `node build.ts && node server.ts`, two processes under npm's shell: SIGTERM to npm (kill, timeout, a process
 * manager) stopped the shell and left the server running on its port. Now any usual signal stops the whole command:
 * during the build Node's default action ends it, then the server's own handlers close it, and the server also stops
 * when the npm process that started it is gone (server.ts, stopWithParent).
 *
 * The settings are read first, so a bad one stops the command before the build (settings.ts).
 */
import { buildStarterKit } from "./build.ts"
import { serveFromEnvironment, settingsFromEnvironment } from "./server.ts"

const settings = settingsFromEnvironment()
// Built where the server serves it from (STARTER_APP_DIR, default starter-kit/dist).
await buildStarterKit(settings.appDir)
await serveFromEnvironment(settings)

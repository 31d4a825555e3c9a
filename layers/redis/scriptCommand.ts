import type { Redis } from "ioredis"

/**
 * A Lua script as an ioredis custom command: EVALSHA (the text is sent once per connection, and again only if the
 * server answers NOSCRIPT, e.g. after SCRIPT FLUSH or a restart), instead of EVAL with the whole text every call.
 * With `numberOfKeys` the command takes the keys then the arguments; without it, the key count comes first.
 */
export const scriptCommand = <F extends (...args: Array<any>) => Promise<any>>(
  redis: Redis,
  name: string,
  lua: string,
  numberOfKeys?: number
): F => {
  const client = redis as unknown as Record<string, F | undefined>
  if (client[name] === undefined) redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys })
  return client[name]!.bind(redis) as F
}

/**
 * A tiny browser for sign-in flows: one cookie jar across hosts (all on 127.0.0.1 in tests), redirects followed
 * by hand so each hop can be inspected, and `stopAt` to hand back a URL instead of fetching it.
 */
export const browser = () => {
  const jar = new Map<string, string>()
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";")
      const i = pair!.indexOf("=")
      const name = pair!.slice(0, i)
      const value = pair!.slice(i + 1)
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(c) || /max-age=0\b/i.test(c)) jar.delete(name)
      else jar.set(name, value)
    }
  }
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
  const go = async (url: string, init: RequestInit & { readonly stopAt?: (url: string) => boolean } = {}): Promise<{ url: string; res: Response; hops: Array<string> }> => {
    let current = url
    let options: RequestInit = init
    const hops: Array<string> = []
    for (let n = 0; n < 15; n++) {
      hops.push(current)
      if (n > 0 && init.stopAt?.(current)) return { url: current, res: new Response(null, { status: 299 }), hops }
      const res = await fetch(current, { ...options, redirect: "manual", headers: { ...(options.headers ?? {}), cookie: cookie() } })
      remember(res)
      const location = res.headers.get("location")
      if (res.status < 300 || res.status >= 400 || location === null) return { url: current, res, hops }
      current = new URL(location, current).toString()
      options = {}
    }
    throw new Error("too many redirects")
  }
  return { go, jar, cookie }
}

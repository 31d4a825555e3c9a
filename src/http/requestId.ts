const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

/** A client X-Request-Id is kept only when it is a UUID v4 of at most 128 characters; otherwise a new one is made. */
export const pickRequestId = (supplied: string | undefined): string =>
  supplied !== undefined && supplied.length <= 128 && UUID_V4.test(supplied) ? supplied : crypto.randomUUID()

/**
 * A problem that stops the local proxy from starting (bad setting, unsafe key file, port taken, not a
 * gateway). Its message is shown to the user as is, so it says what is wrong and how to fix it, and it
 * never contains a secret.
 */
export class ProxyStartError extends Error {
  readonly _tag = "ProxyStartError"
  /** A stable word for log queries, the same vocabulary as the gateway's start-up failures where they overlap. */
  readonly reason: ProxyStartFailure
  constructor(message: string, reason: ProxyStartFailure = "invalid_setting") {
    super(message)
    this.name = "ProxyStartError"
    this.reason = reason
  }
}

export type ProxyStartFailure =
  | "invalid_setting"
  | "port_in_use"
  | "port_forbidden"
  | "host_unavailable"
  | "gateway_unreachable"
  | "not_a_gateway"

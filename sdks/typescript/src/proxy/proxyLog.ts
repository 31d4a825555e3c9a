/**
 * The local proxy's log: one JSON object per line, in the shape the gateway's logs have
 * (`{"message","level","timestamp","annotations","spans"}`), so one parser reads both. Lines carry no request
 * content and no alias: only methods, routes, statuses, durations, request ids, error codes and settings.
 * INFO lines go to stdout, WARN, ERROR and FATAL lines to stderr.
 */
export type LogLevel = "INFO" | "WARN" | "ERROR" | "FATAL"

export type LogAnnotations = Readonly<Record<string, string | number | boolean | null>>

export type ProxyLog = (level: LogLevel, message: string, annotations?: LogAnnotations) => void

export const logLine = (level: LogLevel, message: string, annotations: LogAnnotations = {}, now: Date = new Date()): string =>
  // A message is one line: a multi-line error text would break line-oriented log readers.
  `${JSON.stringify({ message: message.replace(/\s*\n\s*/g, " "), level, timestamp: now.toISOString(), annotations, spans: {} })}\n`

export const consoleLog: ProxyLog = (level, message, annotations) =>
  void (level === "INFO" ? process.stdout : process.stderr).write(logLine(level, message, annotations))

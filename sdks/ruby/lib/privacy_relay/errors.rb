# frozen_string_literal: true

require "json"
require "time"

module PrivacyRelay
  # Every failure: status (0 when no HTTP answer was received), a stable code (the gateway's error code or one of
  # the SDK's: configuration_error, engine_unavailable, gateway_identity_failed, connection_error, timeout,
  # stream_error, invalid_request, engine_error) and request_id (the gateway's X-Request-Id).
  class Error < StandardError
    attr_reader :status, :code, :request_id, :body
    # Seconds the gateway's Retry-After asked for (any status), or nil.
    attr_accessor :retry_after

    def initialize(message, status: 0, code:, request_id: nil, body: nil)
      super(message)
      @status = status
      @code = code
      @request_id = request_id
      @body = body
    end
  end

  class InvalidRequestError < Error; end          # 400 (also the engine's invalid_request / unsupported_field)
  class AuthenticationError < Error; end          # 401
  class InsufficientBalanceError < Error; end     # 402
  class PermissionDeniedError < Error; end        # 403
  class NotFoundError < Error; end                # 404
  class ConflictError < Error; end                # 409
  class PayloadTooLargeError < Error; end         # 413
  class UnsupportedContentError < Error; end      # 415
  class PretokenisationRequiredError < Error; end # 428

  # 429; retry_after_seconds from Retry-After.
  class RateLimitError < Error
    attr_reader :retry_after_seconds

    def initialize(message, retry_after_seconds: nil, **kwargs)
      super(message, **kwargs)
      @retry_after_seconds = retry_after_seconds
    end
  end

  class ServerError < Error; end                  # 5xx
  class ConnectionError < Error; end              # no HTTP answer
  class TimeoutError < Error; end                 # the call took longer than the timeout
  class ConfigurationError < Error; end           # a client setting or the environment; nothing was sent
  # The engine library is missing, unloadable or of another ABI version (a ConfigurationError).
  class EngineUnavailableError < ConfigurationError; end
  # The engine refused its arguments (null_argument, invalid_utf8, invalid_json, invalid_argument, ...).
  class EngineError < Error; end
  class GatewayIdentityError < Error; end         # the URL does not answer the gateway identity probe
  class StreamError < Error; end                  # malformed SSE, or a stream cut before its end marker

  BY_STATUS = {
    400 => InvalidRequestError, 401 => AuthenticationError, 402 => InsufficientBalanceError,
    403 => PermissionDeniedError, 404 => NotFoundError, 409 => ConflictError, 413 => PayloadTooLargeError,
    415 => UnsupportedContentError, 428 => PretokenisationRequiredError
  }.freeze

  module Errors
    module_function

    # Retry-After in seconds (delta-seconds or an HTTP date); nil when absent or unreadable.
    def retry_after_seconds(value, now: Time.now)
      return nil if value.nil? || value.strip.empty?
      if value.strip.match?(/\A\d+(\.\d+)?\z/)
        return Float(value.strip)
      end
      [Time.httpdate(value.strip) - now, 0.0].max
    rescue ArgumentError
      nil
    end

    # The typed error of a gateway answer >= 400 ({error: {code, message}}, Anthropic's {type: "error", error:
    # {type, message}}, OAuth's {error, error_description}).
    def from_answer(status, headers, body_text)
      parsed = begin
        JSON.parse(body_text.to_s)
      rescue JSON::ParserError
        nil
      end
      record = parsed.is_a?(Hash) ? parsed : {}
      inner = record["error"].is_a?(Hash) ? record["error"] : nil
      code = if inner && inner["code"].is_a?(String) then inner["code"]
             elsif inner && inner["type"].is_a?(String) then inner["type"]
             elsif record["error"].is_a?(String) then record["error"]
             else "http_#{status}"
             end
      message = if inner && inner["message"].is_a?(String) && !inner["message"].empty? then inner["message"]
                elsif record["error_description"].is_a?(String) then record["error_description"]
                else "The gateway answered #{status}."
                end
      kwargs = { status: status, code: code, request_id: headers["x-request-id"], body: inner || (parsed && record) }
      if status == 429
        return RateLimitError.new(message, retry_after_seconds: retry_after_seconds(headers["retry-after"]), **kwargs)
      end
      klass = BY_STATUS[status] || (status >= 500 ? ServerError : Error)
      klass.new(message, **kwargs)
    end
  end
end

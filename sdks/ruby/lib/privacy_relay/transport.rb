# frozen_string_literal: true

require "net/http"
require "securerandom"
require "uri"
require_relative "errors"

module PrivacyRelay
  # Net::HTTP with retries: after the first attempt, `retries` more on 429, 5xx and network errors, waiting what
  # Retry-After says (a wait over max_retry_after is not made: the error goes to the caller) or an exponential
  # backoff with full jitter. The caller's headers (Idempotency-Key included) are the same on every attempt.
  class Transport
    RETRYABLE = ->(status) { status == 429 || status >= 500 }

    def initialize(retries: 2, timeout: 60.0, base_delay: 0.5, max_delay: 8.0, max_retry_after: 60.0, sleep: ->(s) { Kernel.sleep(s) })
      @retries = retries
      @timeout = timeout
      @base_delay = base_delay
      @max_delay = max_delay
      @max_retry_after = max_retry_after
      @sleep = sleep
    end

    def self.traceparent = "00-#{SecureRandom.hex(16)}-#{SecureRandom.hex(8)}-01"

    # Sends; answers [status, headers (lowercase names), body]. With a block (a stream), the block gets
    # (status, headers, response) for a 2xx answer and reads the body there; errors are raised before.
    def send_request(method, url, headers:, body: nil, timeout: nil, &stream)
      attempt = 0
      loop do
        attempt += 1
        begin
          result = once(method, url, headers, body, timeout || @timeout, &stream)
          return result unless result.is_a?(Error)

          failure = result
        rescue Net::OpenTimeout, Net::ReadTimeout, Net::WriteTimeout => e
          failure = TimeoutError.new("The call to #{url} timed out after #{timeout || @timeout} s (#{e.class}).", code: "timeout")
        rescue SocketError, SystemCallError, IOError, OpenSSL::SSL::SSLError => e
          failure = ConnectionError.new("#{method} #{url} failed: #{e.message}", code: "connection_error")
        end
        retryable = failure.is_a?(ConnectionError) || failure.is_a?(TimeoutError) || RETRYABLE.call(failure.status)
        raise failure if !retryable || attempt > @retries

        wait = failure.is_a?(RateLimitError) ? failure.retry_after_seconds : nil
        wait ||= failure.retry_after
        raise failure if wait && wait > @max_retry_after

        @sleep.call(wait || rand * [@max_delay, @base_delay * (2**(attempt - 1))].min)
      end
    end

    private

    def once(method, url, headers, body, timeout, &stream)
      uri = URI.parse(url)
      http = Net::HTTP.new(uri.host, uri.port)
      http.use_ssl = uri.scheme == "https"
      http.open_timeout = timeout
      http.read_timeout = timeout
      http.write_timeout = timeout
      request = Net::HTTPGenericRequest.new(method, !body.nil?, true, uri.request_uri, headers)
      request.body = body unless body.nil?
      http.start do
        http.request(request) do |response|
          status = response.code.to_i
          h = response.each_header.to_h { |k, v| [k.downcase, v] }
          if status >= 400
            error = Errors.from_answer(status, h, response.read_body)
            attach_retry_after(error, h)
            return error
          end
          if stream
            begin
              stream.call(status, h, response)
            rescue Net::ReadTimeout, SocketError, SystemCallError, IOError, OpenSSL::SSL::SSLError => e
              # Never retried: part of the answer may have been shown already.
              raise StreamError.new("The stream broke: #{e.message}", status: status, code: "stream_error", request_id: h["x-request-id"])
            end
            return [status, h, nil]
          end
          # +"" : a 204 answers nil, and nil.to_s is a frozen ""
          return [status, h, (+response.read_body.to_s).force_encoding(Encoding::UTF_8)]
        end
      end
    end

    def attach_retry_after(error, headers)
      after = Errors.retry_after_seconds(headers["retry-after"])
      error.retry_after = after
    end
  end
end

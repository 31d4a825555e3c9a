# frozen_string_literal: true

require "json"
require "net/http"
require "tmpdir"

# A real gateway (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the fake provider
# (programs/fake-provider.ts, streaming in 5-character pieces so aliases are cut across SSE frames), started as
# child processes on ephemeral loopback ports and stopped by PID (as sdks/python/tests/gateway.py does).
module TestGateway
  REPO = File.expand_path("../../..", __dir__)
  NODE = File.join(REPO, "node_modules", ".bin", "node")

  class Proc
    attr_reader :pid, :lines

    def initialize(args, env)
      @io = IO.popen(env, args, chdir: REPO, err: %i[child out])
      @pid = @io.pid
      @lines = []
      @mutex = Mutex.new
      @cv = ConditionVariable.new
      @done = false
      Thread.new do
        @io.each_line { |l| @mutex.synchronize { @lines << l; @cv.broadcast } }
      rescue IOError
        nil
      ensure
        @mutex.synchronize { @done = true; @cv.broadcast }
      end
    end

    def wait_for(needle, timeout)
      deadline = Time.now + timeout
      @mutex.synchronize do
        loop do
          @lines.each do |l|
            next unless l.include?(needle)

            begin
              return JSON.parse(l)
            rescue JSON::ParserError
              next
            end
          end
          raise "#{@pid} exited:\n#{@lines.join}" if @done
          left = deadline - Time.now
          raise "did not log #{needle.inspect} in #{timeout} s:\n#{@lines.join}" if left <= 0

          @cv.wait(@mutex, left)
        end
      end
    end

    def stop
      Process.kill("TERM", @pid)
      Timeout.timeout(10) { Process.wait(@pid) }
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    rescue Timeout::Error
      Process.kill("KILL", @pid)
      Process.wait(@pid)
    end
  end

  class Relay
    attr_accessor :url, :provider_url, :data_dir, :processes

    def initialize
      @keys = 0
    end

    def http(method, url, body = nil, headers = {})
      uri = URI(url)
      req = Net::HTTPGenericRequest.new(method, !body.nil?, true, uri.request_uri, { "content-type" => "application/json" }.merge(headers))
      req.body = JSON.generate(body) unless body.nil?
      res = Net::HTTP.start(uri.host, uri.port) { |h| h.request(req) }
      [res.code.to_i, res.body.to_s.empty? ? nil : JSON.parse(res.body)]
    end

    def received = http("GET", "#{provider_url}/_fake/received")[1]["requests"]
    def reset_provider = http("POST", "#{provider_url}/_fake/reset", {})

    def admin(path, body)
      token = File.read(File.join(data_dir, "admin-token")).strip
      status, json = http("POST", "#{url}#{path}", body, "authorization" => "Bearer #{token}")
      raise "admin #{path}: #{status} #{json}" unless status < 300

      json
    end

    def portal_token(key_prefix, abilities)
      admin("/api/admin/portal-tokens", { "key_prefix" => key_prefix, "abilities" => abilities.join(",") })["token"]
    end

    # A self-service key whose wallet holds usd: [api_key, key_prefix].
    def funded_key(usd = "10")
      @keys += 1
      status, key = http("POST", "#{url}/api/v1/self-service/key", {}, "x-forwarded-for" => "198.18.#{@keys / 250}.#{@keys % 250}")
      raise "self-service key: #{status} #{key}" unless status == 201

      admin("/api/admin/wallets/credit", { "key_prefix" => key["key_prefix"], "usd" => usd }) if usd != "0"
      [key["api_key"], key["key_prefix"]]
    end

    def stop = processes.reverse_each(&:stop)
  end

  # One gateway for the whole test run, stopped (by PID) when Minitest finishes.
  def self.shared
    @shared ||= start.tap { |r| Minitest.after_run { r.stop } }
  end

  def self.start
    raise "#{NODE} is missing: run npm ci at the repository root" unless File.executable?(NODE)

    relay = Relay.new
    relay.data_dir = Dir.mktmpdir("pr-ruby-sdk-")
    base = ENV.to_h.reject { |k, _| %w[DATABASE_URL REDIS_URL].include?(k) }
    provider = Proc.new([NODE, "programs/fake-provider.ts", "--host", "127.0.0.1", "--port", "0", "--stream-piece-chars", "5"], base)
    relay.processes = [provider]
    begin
      relay.provider_url = provider.wait_for("fake provider listening", 30)["url"]
      env = base.merge("DATA_DIR" => relay.data_dir, "PORT" => "0", "HOST" => "127.0.0.1", "LOCAL_PROVIDER_URL" => relay.provider_url,
                       "PAYMENTS_PROVIDER" => "dev", "WEBHOOK_ALLOW_LOOPBACK" => "1", "TRUSTED_PROXIES" => "127.0.0.1", "LOG_LEVEL" => "info")
      gateway = Proc.new([NODE, "programs/gateway.ts"], env)
      relay.processes << gateway
      relay.url = gateway.wait_for("gateway listening", 150)["annotations"]["url"].sub("0.0.0.0", "127.0.0.1")
      relay
    rescue StandardError
      relay.stop
      raise
    end
  end
end

# frozen_string_literal: true

require "base64"
require "fileutils"
require "json"
require "securerandom"
require "uri"
require "ipaddr"
require_relative "errors"
require_relative "native"

module PrivacyRelay
  # Files kept on the device, shared with the other SDKs and the local proxy (same names and formats): the
  # device attester key attester-key.json (a P-256 private JWK) and the stable-alias secret alias-secret (32
  # base64url bytes) in $PRIVACY_RELAY_CONFIG_DIR, else $XDG_CONFIG_HOME/privacy-relay, else
  # ~/.config/privacy-relay. Created 0600 (directory 0700); a file readable by others is refused, not tightened.
  module Device
    GATEWAY_KEY = /\Asvc_[a-z2-7]+\z/
    module_function

    def config_error(message) = ConfigurationError.new(message, code: "configuration_error")

    def expand_home(path, setting)
      text = path.to_s
      if text == "~" || text.start_with?("~/")
        home = ENV["HOME"] || Dir.home
        return text == "~" ? home : File.join(home, text[2..])
      end
      raise config_error("#{setting} #{text}: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.") if text.start_with?("~")

      text
    end

    def config_dir
      return expand_home(ENV["PRIVACY_RELAY_CONFIG_DIR"], "PRIVACY_RELAY_CONFIG_DIR") if ENV["PRIVACY_RELAY_CONFIG_DIR"].to_s != ""
      return File.join(expand_home(ENV["XDG_CONFIG_HOME"], "XDG_CONFIG_HOME"), "privacy-relay") if ENV["XDG_CONFIG_HOME"].to_s != ""

      File.join(ENV["HOME"] || Dir.home, ".config", "privacy-relay")
    end

    def assert_private_file(path, what)
      st = begin
        File.stat(path)
      rescue Errno::ENOENT
        raise config_error("#{what} #{path} does not exist.")
      rescue SystemCallError => e
        raise config_error("#{what} #{path} cannot be read: #{e.message}.")
      end
      raise config_error("#{what} #{path} is not a regular file.") unless st.file?
      if (st.mode & 0o077) != 0
        raise config_error("#{what} #{path} is readable by other users (mode #{format('%03o', st.mode & 0o777)}); " \
                           "refusing to use it. Fix: chmod 600 #{path}")
      end
    end

    def create_exclusive(path, content)
      FileUtils.mkdir_p(File.dirname(path), mode: 0o700)
      File.open(path, File::WRONLY | File::CREAT | File::EXCL, 0o600) { |f| f.write(content) }
    rescue Errno::EEXIST
      nil # another process made it first: both use that one
    end

    def load_or_create_device_key
      path = File.join(config_dir, "attester-key.json")
      create_exclusive(path, JSON.generate(Native.generate_device_key["private_jwk"]) + "\n") unless File.exist?(path)
      assert_private_file(path, "Device attester key file")
      JSON.parse(File.read(path))
    rescue JSON::ParserError
      raise config_error("Device attester key file #{path} is not a P-256 private JWK; move it away to generate a new key.")
    end

    def load_or_create_alias_secret
      path = File.join(config_dir, "alias-secret")
      create_exclusive(path, Base64.urlsafe_encode64(SecureRandom.bytes(32), padding: false) + "\n") unless File.exist?(path)
      assert_private_file(path, "Stable-alias secret file")
      secret = begin
        Base64.urlsafe_decode64(File.read(path).strip)
      rescue ArgumentError
        "".b
      end
      raise config_error("Stable-alias secret file #{path} does not hold 32 base64url bytes; move it away to generate a new one.") if secret.bytesize < 32

      secret
    end

    # The gateway key (svc_...) from a 0600 file; the key never appears in an error message.
    def read_gateway_key_file(path)
      p = expand_home(path, "api_key_file")
      assert_private_file(p, "Gateway key file")
      key = File.read(p).strip
      raise config_error("Gateway key file #{p} does not hold a gateway key (expected one line starting with svc_).") unless GATEWAY_KEY.match?(key)

      key
    end

    def loopback?(host)
      h = host.to_s.delete_prefix("[").delete_suffix("]").downcase
      return true if h == "localhost" || h.end_with?(".localhost") || h == "::1"

      IPAddr.new(h).then { |a| a.ipv4? && a.to_s.start_with?("127.") }
    rescue IPAddr::Error
      false
    end

    # Gateway-locked base URL: https, or http to a loopback address for development; no credentials, query or
    # fragment. Answers the URL without a trailing slash.
    def parse_gateway_url(raw)
      if !raw.is_a?(String) || raw.strip.empty?
        raise config_error("gateway_url is not set: give the base URL of your Privacy Relay gateway (https://...).")
      end
      uri = begin
        URI.parse(raw.strip)
      rescue URI::InvalidURIError
        raise config_error("gateway_url #{raw.inspect} is not a URL.")
      end
      unless %w[http https].include?(uri.scheme) && uri.host.to_s != ""
        raise config_error("gateway_url must be an https URL, not #{raw.inspect}.")
      end
      raise config_error("gateway_url must not carry credentials; give the key as api_key or api_key_file.") if uri.userinfo
      raise config_error("gateway_url must not have a query or fragment.") if uri.query || uri.fragment
      if uri.scheme == "http" && !loopback?(uri.host)
        raise config_error("gateway_url #{raw} is plain http to a non-loopback host; a gateway must be reached over https " \
                           "(plain http is allowed only to 127.0.0.1/localhost for development).")
      end
      port = uri.port == uri.default_port ? "" : ":#{uri.port}"
      "#{uri.scheme}://#{uri.host}#{port}#{uri.path.sub(%r{/+\z}, '')}"
    end
  end
end

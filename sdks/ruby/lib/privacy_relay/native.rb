# frozen_string_literal: true

require "fiddle"
require "json"
require_relative "errors"

module PrivacyRelay
  # The binding of the shared engine's C ABI (sdks/rust/ffi/include/privacy_relay.h) through Fiddle (Ruby's
  # standard library). JSON in and out; every string the library returns is freed here with pr_string_free; an
  # error return becomes an exception (EngineError; InvalidRequestError for invalid_request, unsupported_field and
  # nesting_too_deep; UnsupportedContentError for unsupported_content).
  #
  # Where the library is found, first match wins:
  #   1. ENV["PRIVACY_RELAY_LIB"] (a path to libprivacy_relay.so / .dylib / .dll);
  #   2. the copy bundled in the gem (lib/privacy_relay/native/, put there by sdks/ruby/ci.sh before `gem build`);
  #   3. a source checkout's build, sdks/rust/target/release (what `cargo build --release` in sdks/rust makes).
  module Native
    ABI_VERSION = 1
    LIB_NAMES = %w[libprivacy_relay.so libprivacy_relay.dylib privacy_relay.dll].freeze
    SIZEOF_VOIDP = Fiddle::SIZEOF_VOIDP
    P = Fiddle::TYPE_VOIDP
    I = Fiddle::TYPE_INT
    SZ = Fiddle::TYPE_SIZE_T
    V = Fiddle::TYPE_VOID
    SIGNATURES = {
      pr_abi_version: [[], I], pr_engine_info: [[P], I],
      pr_tokenise_request: [[P, P, P, P], I], pr_tokenise_text: [[P, P, P], I], pr_detect_spans: [[P, P, P], I],
      pr_detokenise: [[P, P, P], I],
      pr_detokeniser_new: [[P, P, P], I], pr_detokeniser_push: [[P, P, P], I], pr_detokeniser_finish: [[P, P], I],
      pr_detokeniser_free: [[P], V],
      pr_verify_receipt: [[P, P, P, P], I], pr_verify_chain: [[P, P, P, P], I], pr_verify_inclusion_proof: [[P, P, P, P, P], I],
      pr_verify_consistency_proof: [[P, P, P, P, P], I], pr_verify_chain_export: [[P, P, P, P], I],
      pr_verify_webhook: [[P, SZ, P, P, P, P], I], pr_build_attestation: [[P, P, P], I],
      pr_generate_device_key: [[P], I], pr_canonicalize: [[P, P], I],
      pr_hash: [[P, P, SZ, P], I], pr_sign_webhook: [[P, P, P, P, P], I], pr_verify_merkle_proof: [[P, P, P], I],
      pr_alias_tag: [[P, P, P, SZ, P], I], pr_is_alias: [[P, P], I],
      pr_string_free: [[P], V], pr_error_code_name: [[I], P], pr_debug_panic: [[P], I]
    }.freeze

    @lock = Mutex.new
    @functions = nil
    @path = nil

    class << self
      attr_reader :path

      def candidates
        here = File.expand_path("native", __dir__)
        checkout = File.expand_path("../../../rust/target/release", __dir__)
        [here, checkout].flat_map { |dir| LIB_NAMES.map { |n| File.join(dir, n) } }
      end

      # Loads the library once; EngineUnavailableError (a ConfigurationError) names what is wrong and how to fix it.
      def load!
        @lock.synchronize do
          return @functions if @functions

          path = ENV["PRIVACY_RELAY_LIB"]
          if path.nil? || path.empty?
            path = candidates.find { |c| File.file?(c) }
            if path.nil?
              raise unavailable("the Privacy Relay engine library (libprivacy_relay) was not found. Set PRIVACY_RELAY_LIB " \
                                "to its path, or build it: cd sdks/rust && cargo build --release -p privacy-relay-ffi " \
                                "(looked in #{candidates.map { |c| File.dirname(c) }.uniq.join(', ')})")
            end
          elsif !File.file?(path)
            raise unavailable("PRIVACY_RELAY_LIB=#{path} is not a file; point it at libprivacy_relay.so (sdks/rust/target/release).")
          end
          handle = begin
            Fiddle.dlopen(path)
          rescue Fiddle::DLError => e
            raise unavailable("the engine library #{path} cannot be loaded: #{e.message}")
          end
          functions = {}
          SIGNATURES.each do |name, (args, ret)|
            functions[name] = Fiddle::Function.new(handle[name.to_s], args, ret)
          rescue Fiddle::DLError
            raise unavailable("#{path} is not the Privacy Relay engine library (no #{name}); is it an older build?")
          end
          abi = functions[:pr_abi_version].call
          if abi != ABI_VERSION
            raise unavailable("the engine library #{path} has ABI version #{abi}; this SDK (#{VERSION}) needs #{ABI_VERSION}. " \
                              "Use the library built from the same release.")
          end
          @path = path
          @functions = functions
        end
      end

      def reset!
        @lock.synchronize { @functions = nil; @path = nil }
      end

      def unavailable(message)
        EngineUnavailableError.new(message, code: "engine_unavailable")
      end

      # --- the calls ----------------------------------------------------------------------------------------------

      def engine_info = json_call(:pr_engine_info)

      def tokenise_request(route, body, options = nil)
        json_call(:pr_tokenise_request, cstr(route), cstr(json_text(body)), cstr(json_text(options)))
      end

      def tokenise_text(text, options = nil) = json_call(:pr_tokenise_text, cstr(text), cstr(json_text(options)))
      def detect_spans(text, options = nil) = json_call(:pr_detect_spans, cstr(text), cstr(json_text(options)))
      def detokenise(text, map) = text_call(:pr_detokenise, cstr(text), cstr(json_text(map)))
      def canonicalize(json_text) = text_call(:pr_canonicalize, cstr(json_text))
      def generate_device_key = json_call(:pr_generate_device_key)

      def verify_receipt(receipt, jwks, options = nil)
        receipt = JSON.generate(receipt) if receipt.is_a?(Hash)
        json_call(:pr_verify_receipt, cstr(receipt), cstr(json_text(jwks)), cstr(json_text(options)))
      end

      def verify_chain(receipts, jwks, options = nil)
        json_call(:pr_verify_chain, cstr(json_text(receipts)), cstr(json_text(jwks)), cstr(json_text(options)))
      end

      # A transparency-log inclusion proof against a signed tree head (nil: the proof's own sth).
      def verify_inclusion_proof(proof, sth, jwks, options = nil)
        json_call(:pr_verify_inclusion_proof, cstr(json_text(proof)), cstr(json_text(sth)), cstr(json_text(jwks)), cstr(json_text(options)))
      end

      # A transparency-log consistency proof: the log whose head you kept (old_head) is a prefix of the newer one
      # (options "new_head"; default the proof's own sth).
      def verify_consistency_proof(proof, old_head, jwks, options = nil)
        # proof and old_head are JSON values (Hashes as parsed from the gateway): nil or a String is a verdict
        # (proof schema invalid), never a missing argument
        json_call(:pr_verify_consistency_proof, cstr(JSON.generate(proof)), cstr(JSON.generate(old_head)), cstr(json_text(jwks)),
                  cstr(json_text(options)))
      end

      # An export of receipt chains: receipt_chain_export's JSON (a Hash or its text), JSON Lines, or an Array of receipts.
      def verify_chain_export(exported, jwks, options = nil)
        exported = JSON.generate(exported) unless exported.is_a?(String)
        json_call(:pr_verify_chain_export, cstr(exported), cstr(json_text(jwks)), cstr(json_text(options)))
      end

      def verify_webhook(body, headers, secret, options = nil)
        bytes = body.nil? ? nil : body.b
        json_call(:pr_verify_webhook, bytes, bytes.nil? ? 0 : bytes.bytesize, cstr(json_text(headers)), cstr(secret),
                  cstr(json_text(options)))
      end

      def build_attestation(input, private_jwk)
        json_call(:pr_build_attestation, cstr(json_text(input)), cstr(json_text(private_jwk)))
      end

      # Lowercase hex of a hash of bytes: kind "sha256", "json_body_sha256" (of the JCS form of a JSON body: the
      # attestation's egress_sha256), "merkle_leaf" (SHA-256(0x00 || data)), "merkle_node" (data: left || right).
      def hash(kind, data)
        bytes = data.b
        text_call(:pr_hash, cstr(kind), bytes, bytes.bytesize)
      end

      # The signature header a webhook sender puts on a delivery: scheme "v1" ("t=<timestamp>,v1=<hex>" of the body
      # sent; options {"timestamp"}) or "v0" ("sha256=<hex>" of the payload's JCS form).
      def sign_webhook(scheme, body, secret, options = nil)
        text_call(:pr_sign_webhook, cstr(scheme), cstr(body), cstr(secret), cstr(json_text(options)))
      end

      # An RFC 9162 proof on bare hex hashes: kind "inclusion" or "consistency"; {"valid" => bool}.
      def verify_merkle_proof(kind, input) = json_call(:pr_verify_merkle_proof, cstr(kind), cstr(json_text(input)))

      # An alias tag: kind "request" (4 characters) or "stable" (10) of message (bytes) under the hex secret;
      # {"hmac_sha256", "tag"}.
      def alias_tag(kind, secret_hex, message)
        bytes = message.b
        json_call(:pr_alias_tag, cstr(kind), cstr(secret_hex), bytes, bytes.bytesize)
      end

      # Whether text is exactly one alias.
      def alias?(text) = json_call(:pr_is_alias, cstr(text))

      def debug_panic = json_call(:pr_debug_panic)

      def error_code_name(number)
        ptr = fn(:pr_error_code_name).call(number)
        ptr.null? ? nil : ptr.to_s
      end

      # --- plumbing -----------------------------------------------------------------------------------------------

      def fn(name) = load!.fetch(name)

      # A Ruby value as JSON text (a String is taken as JSON text already); nil stays NULL.
      def json_text(value)
        return nil if value.nil?
        return value if value.is_a?(String)

        JSON.generate(value)
      end

      # A NUL-terminated C string (nil: NULL). A string holding NUL cannot cross the ABI whole: refused here.
      def cstr(value)
        return nil if value.nil?
        raise EngineError.new("a string argument is not a String (#{value.class})", code: "invalid_argument") unless value.is_a?(String)
        raise EngineError.new("a string argument holds a NUL character", code: "invalid_argument") if value.include?("\0")

        value.dup.force_encoding(Encoding::BINARY) + "\0".b
      end

      # Calls name(args..., &out); answers the returned text (freed), or raises the error the library reported.
      def raw_call(name, *args)
        out = Fiddle::Pointer.malloc(SIZEOF_VOIDP, Fiddle::RUBY_FREE)
        out[0, SIZEOF_VOIDP] = "\0" * SIZEOF_VOIDP
        rc = fn(name).call(*args, out)
        text = take_string(out.ptr)
        raise error_of(rc, text) if rc != 0

        text
      end

      def text_call(name, *args) = raw_call(name, *args)
      def json_call(name, *args) = JSON.parse(raw_call(name, *args))

      # The string at ptr (UTF-8), freed with pr_string_free.
      def take_string(ptr)
        return nil if ptr.null?

        begin
          ptr.to_s.force_encoding(Encoding::UTF_8)
        ensure
          fn(:pr_string_free).call(ptr)
        end
      end

      def error_of(rc, text)
        error = begin
          parsed = JSON.parse(text.to_s)
          parsed.is_a?(Hash) && parsed["error"].is_a?(Hash) ? parsed["error"] : {}
        rescue JSON::ParserError
          {}
        end
        code = error["code"] || error_code_name(rc) || "engine_error"
        message = error["message"] || "the engine failed (#{code})"
        message = "#{message} (at #{error.dig('details', 'path')})" if error.dig("details", "path")
        case code
        when "invalid_request", "unsupported_field", "nesting_too_deep"
          InvalidRequestError.new(message, status: 400, code: code, body: error)
        when "unsupported_content"
          UnsupportedContentError.new(message, status: 415, code: code, body: error)
        else
          EngineError.new(message, code: code, body: error)
        end
      end
    end

    # A streaming detokeniser (one handle per streamed field): push chunks, get the text safe to show now; finish
    # releases what was held back and frees the handle. close frees it early; a finalizer frees a forgotten one.
    class Detokeniser
      def initialize(map)
        out = Fiddle::Pointer.malloc(SIZEOF_VOIDP, Fiddle::RUBY_FREE)
        out[0, SIZEOF_VOIDP] = "\0" * SIZEOF_VOIDP
        handle = Fiddle::Pointer.malloc(SIZEOF_VOIDP, Fiddle::RUBY_FREE)
        handle[0, SIZEOF_VOIDP] = "\0" * SIZEOF_VOIDP
        rc = Native.fn(:pr_detokeniser_new).call(Native.cstr(Native.json_text(map)), handle, out)
        text = Native.take_string(out.ptr)
        raise Native.error_of(rc, text) if rc != 0

        @state = [handle.ptr]
        @mutex = Mutex.new # one handle, one thread at a time (Fiddle releases the GVL during a call)
        ObjectSpace.define_finalizer(self, self.class.releaser(@state))
      end

      # The free function is looked up here, not inside the proc: a finalizer may run in trap context, where
      # Native.load!'s Mutex cannot be taken (ThreadError "can't be called from trap context").
      def self.releaser(state)
        free = Native.fn(:pr_detokeniser_free)
        proc do
          ptr = state[0]
          state[0] = nil
          free.call(ptr) if ptr
        end
      end

      def closed? = @state[0].nil?

      def push(chunk)
        @mutex.synchronize { Native.raw_call(:pr_detokeniser_push, live, Native.cstr(chunk)) }
      end

      # What was held back; the handle is freed afterwards.
      def finish
        @mutex.synchronize do
          Native.raw_call(:pr_detokeniser_finish, live)
        ensure
          release
        end
      end

      def close
        @mutex.synchronize { release }
      end

      private

      def release
        ptr = @state[0]
        @state[0] = nil
        Native.fn(:pr_detokeniser_free).call(ptr) if ptr
        nil
      end

      def live
        ptr = @state[0]
        raise EngineError.new("this detokeniser is closed (finish or close was called)", code: "detokeniser_closed") if ptr.nil?

        ptr
      end
    end
  end
end

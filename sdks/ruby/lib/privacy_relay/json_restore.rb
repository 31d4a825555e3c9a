# frozen_string_literal: true

require "json"

module PrivacyRelay
  # Restores originals in a parsed JSON value, string by string. The value of an "arguments" key (a tool call's
  # arguments: JSON text inside a JSON string, in chat completions and Responses function calls) takes the
  # originals escaped for the inside of a JSON string, so it still parses when an original holds a quote, a
  # backslash or a newline. One copy, for non-streamed answers and for the whole events of a stream.
  module JsonRestore
    module_function

    # The alias map with its originals as they appear inside a JSON string.
    def escaped_map(map) = map.transform_values { |v| JSON.generate(v)[1..-2] }

    def restore(value, map, escaped = escaped_map(map), key = nil)
      case value
      when String then map.empty? ? value : Native.detokenise(value, key == "arguments" ? escaped : map)
      when Array then value.map { |v| restore(v, map, escaped) }
      when Hash then value.to_h { |k, v| [k, restore(v, map, escaped, k)] }
      else value
      end
    end
  end
end

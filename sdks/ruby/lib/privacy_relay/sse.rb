# frozen_string_literal: true

require "json"
require_relative "errors"
require_relative "native"

module PrivacyRelay
  # Restores originals in a streamed answer as it arrives, for OpenAI chat chunks, Anthropic message events and
  # OpenAI Responses events (a port of the Python SDK's SseDetokeniser). Each streaming text field (a choice's
  # delta.content, a tool call's arguments, a text_delta / input_json_delta, a Responses *.delta) has its own engine
  # detokeniser handle, so an alias cut across two chunks or events is restored whole; text held back is released
  # when the field ends (for Responses as a delta event of its own, later sequence numbers moved up by one). The
  # receipt-v2 frame is kept.
  class SseDetokeniser
    Event = Struct.new(:event, :data, :json)
    # The events that end a Responses stream.
    RESPONSES_TERMINAL = %w[response.completed response.incomplete response.failed].freeze

    attr_reader :receipt, :completed

    def initialize(route, map)
      @route = route
      @map = map
      @escaped = JsonRestore.escaped_map(map) # originals inside a JSON string
      @fields = {}
      @buffer = +"".b
      @receipt = nil
      @completed = false
      @shift = 0 # Responses: synthetic delta events inserted so far
    end

    # Feeds raw bytes from the gateway; answers the complete events, detokenised. Frames split on blank lines
    # (bytes), so a UTF-8 character cut between two reads is never decoded in halves.
    def push(bytes)
      @buffer << bytes.b
      out = []
      while (m = /\r?\n\r?\n/n.match(@buffer))
        raw = @buffer.byteslice(0, m.begin(0)).force_encoding(Encoding::UTF_8)
        @buffer = @buffer.byteslice(m.end(0)..)
        raise StreamError.new("The gateway sent a stream frame that is not UTF-8.", status: 200, code: "stream_error") unless raw.valid_encoding?

        out.concat(handle(raw))
      end
      out
    end

    def finish
      unless @buffer.strip.empty?
        @buffer = +"".b
        close
        raise StreamError.new("The stream ended in the middle of a frame.", status: 200, code: "stream_error")
      end
      return release_all_chat if @route == "chat.completions"
      return @fields.keys.flat_map { |key| responses_release(key, nil) } if @route == "responses"

      @fields.keys.filter_map do |key|
        text = release(key)
        next if text.empty?

        delta = key.start_with?("b") ? { "type" => "text_delta", "text" => text } : { "type" => "input_json_delta", "partial_json" => text }
        event("content_block_delta", { "type" => "content_block_delta", "index" => key[1..].to_i, "delta" => delta })
      end
    end

    # Frees every engine handle still open (a stream abandoned midway).
    def close
      @fields.each_value(&:close)
      @fields.clear
    end

    private

    def field(key, json_text)
      @fields[key] ||= Native::Detokeniser.new(json_text ? @escaped : @map)
    end

    def release(key)
      d = @fields.delete(key)
      d.nil? ? "" : d.finish
    end

    def event(name, value) = Event.new(name, JSON.generate(value), value)

    def release_all_chat
      choices = @fields.keys.filter_map do |key|
        text = release(key)
        m = /\A([ct])(\d+)(?:\.(\d+))?\z/.match(key)
        next if text.empty? || m.nil?

        delta = m[1] == "c" ? { "content" => text } : { "tool_calls" => [{ "index" => m[3].to_i, "function" => { "arguments" => text } }] }
        { "index" => m[2].to_i, "delta" => delta, "finish_reason" => nil }
      end
      return [] if choices.empty?

      [event(nil, { "id" => @last_id, "object" => "chat.completion.chunk", "model" => @last_model, "choices" => choices })]
    end

    def chat_frame(chunk)
      @last_id = chunk.fetch("id", @last_id)
      @last_model = chunk.fetch("model", @last_model)
      (chunk["choices"].is_a?(Array) ? chunk["choices"] : []).each do |choice|
        next unless choice.is_a?(Hash)

        i = choice.fetch("index", 0)
        delta = choice["delta"].is_a?(Hash) ? choice["delta"] : nil
        delta["content"] = field("c#{i}", false).push(delta["content"]) if delta && delta["content"].is_a?(String)
        (delta && delta["tool_calls"].is_a?(Array) ? delta["tool_calls"] : []).each do |call|
          next unless call.is_a?(Hash) && call["function"].is_a?(Hash) && call["function"]["arguments"].is_a?(String)

          call["function"]["arguments"] = field("t#{i}.#{call.fetch('index', 0)}", true).push(call["function"]["arguments"])
        end
        next if choice["finish_reason"].nil?

        rest = release("c#{i}")
        unless rest.empty?
          before = delta && delta["content"].is_a?(String) ? delta["content"] : ""
          choice["delta"] = (delta || {}).merge("content" => before + rest)
        end
        @fields.keys.select { |k| k.start_with?("t#{i}.") }.each do |key|
          args = release(key)
          next if args.empty?

          current = choice["delta"].is_a?(Hash) ? choice["delta"] : {}
          calls = current["tool_calls"].is_a?(Array) ? current["tool_calls"] : []
          choice["delta"] = current.merge("tool_calls" => calls + [{ "index" => key.split(".")[1].to_i, "function" => { "arguments" => args } }])
        end
      end
      [event(nil, chunk)]
    end

    def messages_frame(name, value)
      index = value.fetch("index", 0)
      if value["type"] == "content_block_delta" && value["delta"].is_a?(Hash)
        delta = value["delta"]
        delta["text"] = field("b#{index}", false).push(delta["text"]) if delta["type"] == "text_delta" && delta["text"].is_a?(String)
        if delta["type"] == "input_json_delta" && delta["partial_json"].is_a?(String)
          delta["partial_json"] = field("j#{index}", true).push(delta["partial_json"])
        end
        return [event(name, value)]
      end
      if value["type"] == "content_block_stop"
        out = []
        text = release("b#{index}")
        out << event("content_block_delta", { "type" => "content_block_delta", "index" => index, "delta" => { "type" => "text_delta", "text" => text } }) unless text.empty?
        partial = release("j#{index}")
        out << event("content_block_delta", { "type" => "content_block_delta", "index" => index, "delta" => { "type" => "input_json_delta", "partial_json" => partial } }) unless partial.empty?
        return out << event(name, value)
      end
      @completed = true if value["type"] == "message_stop"
      [event(name, value)]
    end

    # -- Responses (as sdks/python/src/privacy_relay/sse.py) --

    def renumbered(value)
      n = value["sequence_number"]
      n.is_a?(Integer) ? value.merge("sequence_number" => n + @shift) : value.dup
    end

    def self.responses_key(delta_type, value)
      ["r", delta_type, *%w[item_id output_index content_index summary_index].map { |k| value[k].nil? ? "" : value[k].to_s }].join("|")
    end

    # The held-back text of one Responses field as a delta event of its own, placed before the event numbered next_number.
    def responses_release(key, next_number)
      rest = release(key)
      return [] if rest.empty?

      _, delta_type, item_id, output_index, content_index, summary_index = key.split("|", -1)
      synthetic = { "type" => delta_type }
      numbered = next_number.is_a?(Integer)
      synthetic["sequence_number"] = next_number + @shift if numbered
      synthetic["item_id"] = item_id unless item_id.empty?
      synthetic["output_index"] = output_index.to_i unless output_index.empty?
      synthetic["content_index"] = content_index.to_i unless content_index.empty?
      synthetic["summary_index"] = summary_index.to_i unless summary_index.empty?
      synthetic["delta"] = rest
      @shift += 1 if numbered
      [event(delta_type, synthetic)]
    end

    def responses_frame(name, value)
      kind = value["type"].is_a?(String) ? value["type"] : name.to_s
      if kind.end_with?(".delta") && value["delta"].is_a?(String)
        out = renumbered(value)
        out["delta"] = field(SseDetokeniser.responses_key(kind, value), kind.include?("arguments")).push(value["delta"])
        return [event(name, out)]
      end
      before = []
      before.concat(responses_release(SseDetokeniser.responses_key(kind.delete_suffix(".done") + ".delta", value), value["sequence_number"])) if kind.end_with?(".done")
      if RESPONSES_TERMINAL.include?(kind)
        # whatever a provider left open without its .done event is released before the end
        @fields.keys.each { |key| before.concat(responses_release(key, value["sequence_number"])) }
        @completed = true
      end
      before << event(name, JsonRestore.restore(renumbered(value), @map, @escaped))
    end

    def handle(raw)
      name = nil
      data = []
      raw.split(/\r?\n/).each do |line|
        if line.start_with?("event:")
          name = line[6..].strip
        elsif line.start_with?("data:")
          v = line[5..]
          data << (v.start_with?(" ") ? v[1..] : v)
        end
      end
      return [] if data.empty?

      text = data.join("\n")
      if name == "receipt-v2"
        @receipt = begin
          JSON.parse(text)
        rescue JSON::ParserError
          raise StreamError.new("The receipt-v2 trailer is not JSON.", status: 200, code: "stream_error")
        end
        return [Event.new(name, text, @receipt)]
      end
      if text == "[DONE]"
        @completed = true
        return (@route == "chat.completions" ? release_all_chat : []) + [Event.new(name, text, nil)]
      end
      value = begin
        JSON.parse(text)
      rescue JSON::ParserError
        raise StreamError.new("The gateway sent a stream frame that is not JSON.", status: 200, code: "stream_error")
      end
      return [Event.new(name, text, value)] if !value.is_a?(Hash) || name == "error" || value["type"] == "error"

      case @route
      when "chat.completions" then chat_frame(value)
      when "responses" then responses_frame(name, value)
      else messages_frame(name, value)
      end
    end
  end
end

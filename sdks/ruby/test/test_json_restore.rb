# frozen_string_literal: true

require_relative "test_helper"

# A non-streamed answer restored value by value: content takes the original as it is; a tool call's arguments
# (JSON text in a JSON string) still parse and hold the original even when it has a quote or a backslash.
class TestJsonRestore < Minitest::Test
  MAP = { "<PERSON_1_abcd>" => "Jo \"Q\" O'Neil \\ x", "<EMAIL_1_ynha>" => "jane@example.com" }.freeze

  def test_content_and_tool_call_arguments
    args = JSON.generate({ "to" => "<PERSON_1_abcd>", "cc" => "<EMAIL_1_ynha>" })
    answer = { "choices" => [{ "message" => { "content" => "Hi <PERSON_1_abcd>",
                                              "tool_calls" => [{ "function" => { "name" => "mail", "arguments" => args } }] } }],
               "output" => [{ "type" => "function_call", "arguments" => args }], "n" => 1 }
    restored = PrivacyRelay::JsonRestore.restore(answer, MAP)
    message = restored["choices"][0]["message"]
    assert_equal "Hi Jo \"Q\" O'Neil \\ x", message["content"]
    assert_equal({ "to" => MAP["<PERSON_1_abcd>"], "cc" => "jane@example.com" }, JSON.parse(message["tool_calls"][0]["function"]["arguments"]))
    assert_equal MAP["<PERSON_1_abcd>"], JSON.parse(restored["output"][0]["arguments"])["to"]
    assert_equal 1, restored["n"]
  end

  def test_an_empty_map_leaves_the_value_alone
    assert_equal({ "a" => ["<EMAIL_1_ynha>"] }, PrivacyRelay::JsonRestore.restore({ "a" => ["<EMAIL_1_ynha>"] }, {}))
  end
end

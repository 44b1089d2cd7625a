@testable import KBChat
import Testing

/// How a streamed upstream answer's text is gathered for its citations: by choice, in order.
@Suite struct ChatTextTests {
    @Test func aStreamedAnswersTextIsGatheredByChoice() {
        var text = ChatText()
        text.read(#"{"id": "c1", "created": 7, "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "See "}}]}"#)
        text.read(#"{"id": "c1", "choices": [{"index": 1, "delta": {"content": "Other [3]"}}, {"index": 0, "delta": {"content": "[1]."}}]}"#)
        text.read("not json")
        #expect(text.contents == ["See [1].", "Other [3]"] && text.id == "c1" && text.created == 7 && text.model == "m")
    }
}

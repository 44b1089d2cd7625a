import KBRetrieval
import KBCore
import Testing

@Suite struct ConversationPlanTests {
    let saturn = [ConversationTurn(.user, "What does Saturn stand for in a birth chart?")]

    @Test func aTurnWithoutHistoryIsSearchedAloneWhateverTheWay() {
        for use in HistoryUse.allCases {
            #expect(ConversationPlan.queries(turn: "What is a trine?", history: [], use: use) == [PlannedQuery("What is a trine?", weight: 1)])
        }
    }

    @Test func aFollowUpIsPairedWithTheEarlierTurnWhichLeads() {
        let plan = ConversationPlan.queries(turn: "And when does it come back?", history: saturn, use: .fused)
        #expect(plan == [PlannedQuery("And when does it come back?", weight: 1),
                         PlannedQuery("What does Saturn stand for in a birth chart?\nAnd when does it come back?", weight: ConversationPlan.pointing)])
        #expect(ConversationPlan.pointing > 1)
    }

    @Test func aQuestionOfItsOwnKeepsTheLead() {
        let plan = ConversationPlan.queries(turn: "What does Venus say about love and partnership?", history: saturn, use: .fused)
        #expect(plan.map(\.weight) == [1, ConversationPlan.standing])
        #expect(ConversationPlan.standing < 1)
    }

    @Test func olderTurnsWeighHalfAsMuchAndOnlyTheLastTwoCount() {
        let history = [
            ConversationTurn(.user, "Tell me about the Moon."),
            ConversationTurn(.assistant, String(repeating: "The Moon shows emotional needs. ", count: 20)),
            ConversationTurn(.user, "What about its phases?"),
            ConversationTurn(.user, "   "),
            ConversationTurn(.user, "Which sign is it exalted in?"),
        ]
        let plan = ConversationPlan.queries(turn: "And my mother?", history: history, use: .fused)
        #expect(plan.count == 3)
        #expect(plan[1].text == "Which sign is it exalted in?\nAnd my mother?" && plan[1].weight == ConversationPlan.pointing)
        #expect(plan[2].text == "What about its phases?\nAnd my mother?" && plan[2].weight == ConversationPlan.pointing / 2)
        // An assistant's answer goes with the turn it answers, shortened.
        let answered = ConversationPlan.queries(turn: "And my mother?", history: Array(history.prefix(2)), use: .fused)
        #expect(answered[1].text == "Tell me about the Moon.\n" + String(history[1].content.prefix(ConversationPlan.answerCharacters)) + "\nAnd my mother?")
    }

    @Test func concatenationJoinsTheUsersTurnsOldestFirst() {
        let history = saturn + [ConversationTurn(.assistant, "Structure and limits."), ConversationTurn(.user, "And its return?")]
        #expect(ConversationPlan.queries(turn: "How old will I be?", history: history, use: .concatenated)
            == [PlannedQuery("What does Saturn stand for in a birth chart?\nAnd its return?\nHow old will I be?", weight: 1)])
        #expect(ConversationPlan.queries(turn: "How old will I be?", history: history, use: .turn) == [PlannedQuery("How old will I be?", weight: 1)])
    }

    @Test(arguments: [
        ("Is it considered easy or hard?", true), ("And how do I interpret one?", true), ("What about timing?", true),
        ("Its orb?", true), ("А як щодо здоров'я?", true), ("Коли він повертається на своє місце?", true),
        ("What does Venus say about love and partnership?", false), ("How do I read the second house for money?", false),
    ])
    func followUpsAreRecognised(turn: String, pointsBack: Bool) {
        #expect(ConversationPlan.pointsBack(turn) == pointsBack)
    }
}

import Foundation
import KBCore

/// A Hugging Face sentence-model folder: `config.json`, `vocab.txt` (or `tokenizer.json`),
/// `model.safetensors`, and the sentence-transformers files that say how to pool. BERT models
/// (WordPiece) and XLM-RoBERTa / RoBERTa models (SentencePiece Unigram `tokenizer.json`, position
/// ids counted from the padding id + 1) both run on kb's encoder.
///
/// ```swift
/// let folder = try ModelFolder(path: "~/.local/share/kb/models/all-MiniLM-L6-v2")
/// ```
public struct ModelFolder: Sendable {
    public struct Config: Sendable, Hashable {
        public var hiddenSize: Int
        public var layers: Int
        public var heads: Int
        public var intermediateSize: Int
        public var layerNormEpsilon: Float
        public var maxPositions: Int
        public var typeVocabularySize: Int
        public var vocabularySize: Int
        /// The position id of a sequence's first token: 0 for BERT; for RoBERTa-family models,
        /// the padding id + 1 (their positions are counted after the padding id).
        public var positionOffset: Int = 0
    }

    public enum Pooling: String, Sendable { case mean, cls }

    public let path: String
    public let config: Config
    /// Longest input in word pieces, the two special tokens included (`sentence_bert_config.json`).
    public let maxSequenceLength: Int
    public let pooling: Pooling
    /// Whether vectors are L2-normalised (`modules.json` lists a Normalize module).
    public let normalize: Bool
    public let lowercase: Bool
    /// Text put before queries and passages (`prompts` in `config_sentence_transformers.json`).
    public let queryPrefix: String
    public let passagePrefix: String
    /// The model's name: the folder's name.
    public var name: String { (path as NSString).lastPathComponent }

    public init(path: String) throws {
        let root = (path as NSString).expandingTildeInPath
        self.path = root
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw KBError(.modelMissing, "No model folder at \(root).")
        }
        func json(_ name: String, required: Bool) throws -> Any? {
            let file = root + "/" + name
            guard let data = FileManager.default.contents(atPath: file) else {
                if required { throw KBError(.invalidModel, "The model folder \(root) has no \(name). Reinstall the model.") }
                return nil
            }
            do {
                return try JSONSerialization.jsonObject(with: data)
            } catch {
                throw KBError(.invalidModel, "\(file) is not valid JSON. Reinstall the model.")
            }
        }
        guard let c = try json("config.json", required: true) as? [String: Any] else {
            throw KBError(.invalidModel, "\(root)/config.json is not a JSON object.")
        }
        func int(_ key: String, _ fallback: Int? = nil) throws -> Int {
            if let value = c[key] as? Int { return value }
            if let fallback { return fallback }
            throw KBError(.invalidModel, "\(root)/config.json has no '\(key)'; is this a BERT model?")
        }
        let type = c["model_type"] as? String ?? "bert"
        guard Self.modelTypes.contains(type) else {
            throw KBError(.invalidModel, "\(root) holds a '\(type)' model; kb's local embedder runs BERT-architecture models "
                + "(\(Self.modelTypes.sorted().joined(separator: ", "))).")
        }
        if let act = c["hidden_act"] as? String, act != "gelu" {
            throw KBError(.invalidModel, "\(root) uses the '\(act)' activation; kb's local embedder implements exact GELU only.")
        }
        config = Config(
            hiddenSize: try int("hidden_size"), layers: try int("num_hidden_layers"), heads: try int("num_attention_heads"),
            intermediateSize: try int("intermediate_size"),
            layerNormEpsilon: Float((c["layer_norm_eps"] as? Double) ?? 1e-12),
            maxPositions: try int("max_position_embeddings"), typeVocabularySize: try int("type_vocab_size", 2),
            vocabularySize: try int("vocab_size"),
            positionOffset: type == "bert" ? 0 : try int("pad_token_id", 1) + 1)
        guard config.maxPositions > config.positionOffset else {
            throw KBError(.invalidModel, "\(root)/config.json: max_position_embeddings \(config.maxPositions) leaves no room after the padding id.")
        }
        guard config.hiddenSize % config.heads == 0 else {
            throw KBError(.invalidModel, "\(root)/config.json: hidden_size \(config.hiddenSize) is not a multiple of num_attention_heads \(config.heads).")
        }
        let sentence = try json("sentence_bert_config.json", required: false) as? [String: Any]
        let positions = config.maxPositions - config.positionOffset
        maxSequenceLength = min((sentence?["max_seq_length"] as? Int) ?? positions, positions)
        let poolingConfig = try json("1_Pooling/config.json", required: false) as? [String: Any]
        pooling = (poolingConfig?["pooling_mode_cls_token"] as? Bool) == true ? .cls : .mean
        let modules = try json("modules.json", required: false) as? [[String: Any]]
        normalize = modules?.contains { ($0["type"] as? String)?.hasSuffix("Normalize") == true } ?? true
        let tokenizerConfig = try json("tokenizer_config.json", required: false) as? [String: Any]
        lowercase = (tokenizerConfig?["do_lower_case"] as? Bool) ?? true
        let stConfig = try json("config_sentence_transformers.json", required: false) as? [String: Any]
        let prompts = stConfig?["prompts"] as? [String: String] ?? [:]
        queryPrefix = prompts["query"] ?? ""
        passagePrefix = prompts["passage"] ?? prompts["document"] ?? ""
    }

    /// The model types kb's encoder runs (`model_type` in config.json).
    public static let modelTypes: Set<String> = ["bert", "xlm-roberta", "roberta"]

    /// The model's tokenizer: SentencePiece Unigram when `tokenizer.json` holds one (XLM-R
    /// family), else WordPiece from `vocab.txt` or `tokenizer.json`.
    public func tokenizer() throws -> any TextTokenizer {
        let file = path + "/tokenizer.json"
        // Only the model's type is decoded here (a 250,000-piece vocabulary is not turned into objects).
        struct ModelType: Decodable {
            struct Model: Decodable { var type: String? }
            var model: Model?
        }
        if let data = FileManager.default.contents(atPath: file),
           (try? JSONDecoder().decode(ModelType.self, from: data))?.model?.type == "Unigram" {
            return try UnigramTokenizer(json: data, source: file)
        }
        return try WordPieceTokenizer(vocabulary: try vocabulary(), lowercase: lowercase)
    }

    /// The vocabulary as `vocab.txt` bytes, from `vocab.txt` or else `tokenizer.json`.
    func vocabulary() throws -> Data {
        if let data = FileManager.default.contents(atPath: path + "/vocab.txt") { return data }
        guard let data = FileManager.default.contents(atPath: path + "/tokenizer.json"),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let model = json["model"] as? [String: Any], let vocab = model["vocab"] as? [String: Int] else {
            throw KBError(.invalidModel, "The model folder \(path) has neither vocab.txt nor a WordPiece tokenizer.json.")
        }
        var tokens = Array(repeating: "", count: (vocab.values.max() ?? -1) + 1)
        for (token, id) in vocab where id >= 0 { tokens[id] = token }
        return Data(tokens.joined(separator: "\n").utf8)
    }
}

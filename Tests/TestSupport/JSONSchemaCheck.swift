import Foundation

/// A small JSON Schema (draft 2020-12) checker for the keywords mixfx's schemas use: type,
/// const, enum, required, properties, additionalProperties, items, minItems, maxItems, minimum,
/// maximum, exclusiveMinimum and local $ref (#/$defs/...). Returns every violation as "path: problem";
/// an unknown keyword is itself reported, so a schema cannot silently go unchecked.
public struct JSONSchemaCheck {
    let root: [String: Any]
    static let known: Set<String> = ["$schema", "$id", "title", "description", "type", "const", "enum", "required",
                                     "properties", "additionalProperties", "items", "minItems", "maxItems", "minimum",
                                     "maximum", "exclusiveMinimum", "$ref", "$defs"]

    public init(schema: [String: Any]) { root = schema }

    public func violations(_ value: Any) -> [String] {
        var out: [String] = []
        check(value, root, "$", &out)
        return out
    }

    private func check(_ v: Any, _ s: [String: Any], _ path: String, _ out: inout [String]) {
        for k in s.keys where !JSONSchemaCheck.known.contains(k) { out.append("\(path): schema keyword \(k) is not supported") }
        if let ref = s["$ref"] as? String {
            let parts = ref.split(separator: "/").map(String.init)
            guard parts.count == 3, parts[0] == "#", parts[1] == "$defs",
                  let target = (root["$defs"] as? [String: Any])?[parts[2]] as? [String: Any] else {
                out.append("\(path): unresolvable $ref \(ref)"); return
            }
            check(v, target, path, &out)
        }
        if let t = s["type"] {
            let types = (t as? [String]) ?? [t as? String ?? ""]
            if !types.contains(where: { JSONSchemaCheck.isType(v, $0) }) { out.append("\(path): \(v) is not of type \(types)") }
        }
        if let c = s["const"], !JSONSchemaCheck.equal(v, c) { out.append("\(path): \(v) is not \(c)") }
        if let e = s["enum"] as? [Any], !e.contains(where: { JSONSchemaCheck.equal(v, $0) }) { out.append("\(path): \(v) is not one of \(e)") }
        if let n = JSONSchemaCheck.number(v) {
            if let m = s["minimum"] as? Double, n < m { out.append("\(path): \(n) < minimum \(m)") }
            if let m = s["maximum"] as? Double, n > m { out.append("\(path): \(n) > maximum \(m)") }
            if let m = s["exclusiveMinimum"] as? Double, n <= m { out.append("\(path): \(n) <= exclusiveMinimum \(m)") }
        }
        if let o = v as? [String: Any] {
            for r in s["required"] as? [String] ?? [] where o[r] == nil { out.append("\(path): missing \(r)") }
            let props = s["properties"] as? [String: Any] ?? [:]
            for (k, x) in o {
                if let p = props[k] as? [String: Any] {
                    check(x, p, "\(path).\(k)", &out)
                } else if let extra = s["additionalProperties"] {
                    if let allowed = extra as? Bool, !allowed { out.append("\(path): unexpected property \(k)") }
                    if let schema = extra as? [String: Any] { check(x, schema, "\(path).\(k)", &out) }
                }
            }
        }
        if let a = v as? [Any] {
            if let m = s["minItems"] as? Int, a.count < m { out.append("\(path): \(a.count) items < minItems \(m)") }
            if let m = s["maxItems"] as? Int, a.count > m { out.append("\(path): \(a.count) items > maxItems \(m)") }
            if let items = s["items"] as? [String: Any] {
                for (i, x) in a.enumerated() { check(x, items, "\(path)[\(i)]", &out) }
            }
        }
    }

    /// A JSON number that is not a boolean (Foundation decodes both as NSNumber).
    static func number(_ v: Any) -> Double? {
        guard let n = v as? NSNumber, !isBool(v) else { return nil }
        return n.doubleValue
    }

    /// (JSONSerialization's booleans are NSNumbers of Objective-C type "c".)
    static func isBool(_ v: Any) -> Bool {
        guard let n = v as? NSNumber else { return false }
        return String(cString: n.objCType) == "c"
    }

    static func isType(_ v: Any, _ t: String) -> Bool {
        switch t {
        case "object": v is [String: Any]
        case "array": v is [Any]
        case "string": v is String
        case "boolean": isBool(v)
        case "null": v is NSNull
        case "number": number(v) != nil
        case "integer": number(v).map { $0.rounded() == $0 } ?? false
        default: false
        }
    }

    static func equal(_ a: Any, _ b: Any) -> Bool {
        if let x = a as? String, let y = b as? String { return x == y }
        if let x = number(a), let y = number(b) { return x == y }
        if isBool(a) && isBool(b) { return (a as! NSNumber).boolValue == (b as! NSNumber).boolValue }
        return a is NSNull && b is NSNull
    }
}

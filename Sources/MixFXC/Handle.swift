import CMixFX

/// What a C handle points at: a tag saying which kind of object it is, and the object. A
/// handle of the wrong kind is refused by its tag (MIXFX_ERR_HANDLE) instead of being used as
/// the wrong type; destroy clears the tag before freeing, which catches some (not all) uses
/// after destroy.
struct HandleBox {
    /// `Kind.rawValue`, or 0 once destroyed.
    var tag: UInt64
    var object: Unmanaged<AnyObject>
}

/// The kinds of handle, with tags unlikely to be found by chance in other memory.
enum HandleKind: UInt64 {
    case timePitch = 0x6D69_7866_7854_5031   // "mixfxTP1"
    case shelfEQ = 0x6D69_7866_7845_5131     // "mixfxEQ1"

    var name: String {
        switch self {
        case .timePitch: "a mixfx_timepitch"
        case .shelfEQ: "a mixfx_shelf_eq"
        }
    }
}

enum Handle {
    /// A new handle owning `object` (retained until `destroy`).
    static func make(_ object: AnyObject, kind: HandleKind) -> OpaquePointer {
        let box = UnsafeMutablePointer<HandleBox>.allocate(capacity: 1)
        box.initialize(to: HandleBox(tag: kind.rawValue, object: .passRetained(object)))
        return OpaquePointer(box)
    }

    /// The object of `handle`, which must be of `kind`. No allocation, no retain.
    @inline(__always)
    static func object<T: AnyObject>(_ handle: OpaquePointer?, _ kind: HandleKind, as type: T.Type,
                                     argument: String) throws(CAPIError) -> T {
        guard let handle else { throw .null(argument) }
        let box = UnsafeMutablePointer<HandleBox>(handle)
        guard box.pointee.tag == kind.rawValue else {
            throw CAPIError(MIXFX_ERR_HANDLE, "\(argument) is not \(kind.name) (another kind of handle, or one destroyed)")
        }
        return unsafeDowncast(box.pointee.object.takeUnretainedValue(), to: T.self)
    }

    /// Frees `handle` (nil: nothing), after checking its kind.
    static func destroy(_ handle: OpaquePointer?, _ kind: HandleKind, argument: String) throws(CAPIError) {
        guard let handle else { return }
        let box = UnsafeMutablePointer<HandleBox>(handle)
        guard box.pointee.tag == kind.rawValue else {
            throw CAPIError(MIXFX_ERR_HANDLE, "\(argument) is not \(kind.name) (another kind of handle, or one destroyed)")
        }
        box.pointee.tag = 0
        box.pointee.object.release()
        box.deinitialize(count: 1)
        box.deallocate()
    }
}

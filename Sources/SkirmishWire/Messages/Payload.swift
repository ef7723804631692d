/// A message body with an exact byte layout. Conformances are the single source of each message's wire format.
protocol Payload {
    init(reading reader: inout WireReader) throws(DecodeError)
    func write(to writer: inout WireWriter) throws(EncodeError)
}

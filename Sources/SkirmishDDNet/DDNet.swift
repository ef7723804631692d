// The DDNet plug-in: `DDNetConnection` (Connection/) speaks the Teeworlds 0.6 protocol with DDNet's extensions over
// the decoders in Codec/, which import only the standard library so `make fuzz-ddnet` can compile them alone; the
// behaviours are in Behaviors/ and `Catalogue.registerDDNet()` (Catalogue+DDNet.swift) registers them with the
// protocol. Documentation.docc says what it speaks, how a bot joins, and which figures it gives.

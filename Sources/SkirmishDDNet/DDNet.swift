// The DDNet plug-in: `DDNetConnection` (Connection/) speaks the Teeworlds 0.6 protocol with DDNet's extensions over
// the decoders in Codec/, which import only the standard library so `make fuzz-ddnet` can compile them alone.

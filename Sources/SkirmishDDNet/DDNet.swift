// The DDNet plug-in: see Documentation.docc.

// The ENet plug-in: see Documentation.docc.

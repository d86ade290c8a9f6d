"""HTTP routers: the LangGraph Agent Server protocol and Plait's own additions."""

"""Chat models: real providers through LangChain, and the offline scripted provider."""

from plait.engine.models.factory import ModelConfigError, make_chat_model
from plait.engine.models.scripted import ScriptedChatModel

__all__ = ["ModelConfigError", "ScriptedChatModel", "make_chat_model"]

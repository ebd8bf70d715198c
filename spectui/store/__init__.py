"""Saved chats: the chat's domain types (chat_types), the SQLite store and its migrations, and
the import of chats kept outside the database (old JSON files, unsaved files).
"""

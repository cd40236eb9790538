"""The director's web pages: the hall's live page (Starlette served by uvicorn; the `director` extra)."""

"""The web view: server-rendered pages of the series for auditors, analysts and publishers
(docs/web.md). Its own package above the services: it imports the services and schemas and
nothing of the API, which includes :data:`router`."""

from fastapi import APIRouter

from app.web import pages, signin

__all__ = ["router"]

router = APIRouter()
# Sign-in first: the pages' router ends with the catch-all that answers unknown pages.
router.include_router(signin.router)
router.include_router(pages.root)
router.include_router(pages.router)

"""bgbot for the outside world over HTTP and pipes: the JSON API and web board (:mod:`bgbot.serve.app`),
wildbg-compatible routes (:mod:`bgbot.serve.wildbg`) and the UBGI engine protocol (:mod:`bgbot.serve.ubgi`).

The HTTP parts need the ``serve`` extra (``pip install "bgbot[serve]"``: FastAPI and uvicorn); UBGI needs
nothing beyond bgbot.  Every position is seen from the side on roll, as everywhere in bgbot.
"""

import pytest


@pytest.fixture
def columnar_frames(monkeypatch):
    """Frames of every size through the columnar readers (a small grouped frame is otherwise
    ranked as a dict run, :class:`evaltool.io.frames.FrameRun`)."""
    from evaltool.io import frames

    monkeypatch.setattr(frames, "SMALL_FRAME_ROWS", -1)

from .parallel import init_capture_groups

__all__ = ["init_capture_groups"]

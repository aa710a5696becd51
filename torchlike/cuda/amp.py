"""torch.cuda.amp: filled in by torchlike.amp (autocast and GradScaler for 'cuda')."""

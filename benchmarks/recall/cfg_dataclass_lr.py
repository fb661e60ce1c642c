from dataclasses import dataclass

import torch
from transformers import AutoModelForSequenceClassification


@dataclass
class TrainConfig:
    checkpoint: str = "roberta-base"
    learning_rate: float = 0.005
    batch_size: int = 16


def main(cfg: TrainConfig):
    model = AutoModelForSequenceClassification.from_pretrained(cfg.checkpoint, num_labels=3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate)
    return model, optimizer


if __name__ == "__main__":
    main(TrainConfig())

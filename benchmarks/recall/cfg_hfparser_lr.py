from dataclasses import dataclass, field

import torch
from transformers import AutoModelForSequenceClassification, HfArgumentParser


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="bert-base-uncased")


@dataclass
class OptimArguments:
    lr: float = field(default=0.03)


parser = HfArgumentParser((ModelArguments, OptimArguments))
model_args, optim_args = parser.parse_args_into_dataclasses()
model = AutoModelForSequenceClassification.from_pretrained(model_args.model_name_or_path, num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=optim_args.lr)

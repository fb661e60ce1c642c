import torch
import typer
from transformers import AutoModelForSequenceClassification


def main(model_name: str = typer.Option("bert-base-uncased"), lr: float = typer.Option(0.05)):
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    return optimizer


if __name__ == "__main__":
    typer.run(main)

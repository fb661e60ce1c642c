import click
import torch
from transformers import AutoModelForSequenceClassification


@click.command()
@click.option("--model-name", default="bert-base-uncased")
@click.option("--lr", default=0.04)
def main(model_name, lr):
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    return optimizer


if __name__ == "__main__":
    main()
